import { Counters } from './counters.js';
import { silentLogger, type Logger } from './logger.js';
import type { Rejected } from './rejected.js';
import type { StageContext } from './stage.js';

export interface StageContextOptions {
  signal?: AbortSignal;
  log?: Logger;
  counters?: Counters;
  /** Receives every rejected record; by default they are kept in `rejects` of the returned context. */
  onReject?: (rejected: Rejected) => void;
}

export interface OwnedStageContext extends StageContext {
  /** The first MAX_KEPT_REJECTS rejections when no onReject handler was given; all are counted. */
  readonly rejects: Rejected[];
}

/** Without a handler, rejections are kept up to this many (memory stays bounded); the rest are counted. */
export const MAX_KEPT_REJECTS = 1000;

export function createStageContext(options: StageContextOptions = {}): OwnedStageContext {
  const counters = options.counters ?? new Counters();
  const rejects: Rejected[] = [];
  const onReject = options.onReject;
  return {
    signal: options.signal ?? new AbortController().signal,
    log: options.log ?? silentLogger,
    counters,
    rejects,
    reject(rejected: Rejected) {
      counters.add(rejected.stage, 'rejected');
      if (onReject) onReject(rejected);
      else if (rejects.length < MAX_KEPT_REJECTS) rejects.push(rejected);
    },
  };
}

/** The same context with another signal (used to link a pipeline's own controller). */
export function withSignal(ctx: StageContext, signal: AbortSignal): StageContext {
  return {
    signal,
    log: ctx.log,
    counters: ctx.counters,
    reject: (r) => ctx.reject(r),
  };
}
