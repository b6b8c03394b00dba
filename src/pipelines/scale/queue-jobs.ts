import { resolve } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { redactUrl } from '../../core/redaction.js';
import type { CollectOptions } from '../collect/run.js';

/** A BullMQ queue: the Redis server (redis:// or rediss://, its password only in the URL the user gave) and the name. */
export interface QueueTarget {
  url: string;
  name: string;
}

export const DEFAULT_QUEUE_NAME = 'roller';

/** What a worker is told of the run a job belongs to: the collect's options (paths absolute), never a credential. */
export type QueueSpec = Pick<
  CollectOptions,
  | 'tasks' | 'harness' | 'models' | 'modelConfig' | 'runName' | 'timeoutS' | 'retries' | 'wireTrace' | 'keepThinking' | 'thinking' | 'captureCalls'
  | 'cacheTrace' | 'harnessProfile' | 'collectPaths' | 'captureDebug' | 'runner' | 'docker' | 'harnessVersion' | 'allowUnverifiedVersion' | 'keyInHarness' | 'maxResultsBytes'
>;

/** One queued sample. */
export interface SampleJobData {
  spec: QueueSpec;
  /** The run directory the sample is published into (the same path on every worker: shared storage). */
  run_dir: string;
  run_lock_digest: string;
  index: number;
  task_id: string;
  model: string;
}

/** What a worker answers for a sample: its status, or that another worker's copy was there first. */
export interface SampleJobResult {
  index: number;
  status: string;
  published: boolean;
  worker: string;
}

/** A job id per run and request: adding the same sample twice (a resumed coordinator) is one job. */
export function sampleJobId(runLockDigest: string, index: number): string {
  return `${runLockDigest.slice('sha256:'.length, 'sha256:'.length + 16)}-${index}`;
}

export function queueSpecOf(o: CollectOptions): QueueSpec {
  if (o.docker?.api) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--queue: a Docker API object cannot travel to a worker; give the engine by DOCKER_HOST on each worker');
  const spec: QueueSpec = {
    tasks: resolve(o.tasks.replace(/^harbor:/, '')),
    harness: o.harness,
    models: o.models,
    ...(o.modelConfig ? { modelConfig: resolve(o.modelConfig) } : {}),
    ...(o.runName ? { runName: o.runName } : {}),
    ...(o.timeoutS !== undefined ? { timeoutS: o.timeoutS } : {}),
    ...(o.retries !== undefined ? { retries: o.retries } : {}),
    ...(o.wireTrace ? { wireTrace: o.wireTrace } : {}),
    ...(o.keepThinking !== undefined ? { keepThinking: o.keepThinking } : {}),
    ...(o.thinking !== undefined ? { thinking: o.thinking } : {}),
    ...(o.captureCalls !== undefined ? { captureCalls: o.captureCalls } : {}),
    ...(o.cacheTrace !== undefined ? { cacheTrace: o.cacheTrace } : {}),
    ...(o.harnessProfile ? { harnessProfile: o.harnessProfile } : {}),
    ...(o.collectPaths ? { collectPaths: o.collectPaths } : {}),
    ...(o.captureDebug ? { captureDebug: o.captureDebug } : {}),
    ...(o.runner ? { runner: o.runner } : {}),
    ...(o.docker ? { docker: o.docker } : {}),
    ...(o.harnessVersion ? { harnessVersion: o.harnessVersion } : {}),
    ...(o.allowUnverifiedVersion ? { allowUnverifiedVersion: true } : {}),
    ...(o.keyInHarness ? { keyInHarness: true } : {}),
    ...(o.maxResultsBytes !== undefined ? { maxResultsBytes: o.maxResultsBytes } : {}),
  };
  return spec;
}

/** --queue URL checked: a Redis URL; said back without its password. */
export function parseQueueUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--queue ${redactUrl(url)}: not a URL; redis://HOST:PORT[/DB] (rediss:// for TLS)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--queue ${redactUrl(url)}: a Redis URL is redis://HOST:PORT[/DB] or rediss://…`);
  return url;
}

/**
 * An ioredis connection for BullMQ (workers need maxRetriesPerRequest null: a blocking call waits as long as it takes).
 * ROLLER_REDIS_PASSWORD, when the URL has none, keeps the password off the command line (where `ps` shows it).
 */
export async function redisConnection(url: string) {
  const { Redis } = await import('ioredis');
  const password = new URL(url).password === '' ? process.env.ROLLER_REDIS_PASSWORD : undefined;
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true, enableOfflineQueue: true, ...(password ? { password } : {}) });
}
