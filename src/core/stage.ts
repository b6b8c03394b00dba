/**
 * The stage contract (DESIGN.md §3). A stage is a plain function over async iterables; Node streams,
 * highland and the CLI are adapters around stages, never the contract. Pulling gives backpressure.
 */
import type { Origin } from './errors.js';
import type { Counters } from './counters.js';
import type { Logger } from './logger.js';
import type { Rejected } from './rejected.js';

export interface StageContext {
  /** Aborted on the first fatal error; every wait inside a stage must observe it. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** received / emitted / rejected / dropped per stage name. */
  readonly counters: Counters;
  /** Where a stage sends a bad record instead of throwing (a bad record is data, not a crash). */
  reject(rejected: Rejected): void;
}

export type Source<O> = (ctx: StageContext) => AsyncIterable<O>;
export type Transform<I, O> = (input: AsyncIterable<I>, ctx: StageContext) => AsyncIterable<O>;

export interface SinkReport {
  readonly name: string;
  /** Items the sink took from its input. */
  readonly received: number;
  /** Items it wrote (or otherwise delivered). */
  readonly written: number;
  readonly bytes?: number;
  readonly files?: Readonly<Record<string, { sha256?: string; bytes: number }>>;
  readonly dropped?: number;
  readonly branches?: readonly SinkReport[];
}

export interface Sink<I> {
  readonly name: string;
  /** Consume the whole input (or until aborted), flush, close, and report. */
  consume(input: AsyncIterable<I>, ctx: StageContext): Promise<SinkReport>;
}

export interface RunReport {
  readonly name: string;
  readonly sinks: readonly SinkReport[];
  readonly counters: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly rejected: number;
  readonly elapsedMs: number;
}

export interface Pipeline {
  readonly name: string;
  run(ctx: StageContext): Promise<RunReport>;
}

/** A small record with where it came from; large bodies travel as file + offset, never copied. */
export interface Envelope<T> {
  readonly seq: number;
  readonly origin: Origin;
  readonly data: T;
}
