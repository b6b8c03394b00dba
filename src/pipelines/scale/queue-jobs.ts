import { createHmac, timingSafeEqual } from 'node:crypto';
import { resolve } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { z } from 'zod';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { redactUrl } from '../../core/redaction.js';
import type { CollectOptions } from '../collect/run.js';

/** A BullMQ queue: the Redis server (redis:// or rediss://, its password only in the URL the user gave) and the name. */
export interface QueueTarget {
  url: string;
  name: string;
}

export const DEFAULT_QUEUE_NAME = 'roller';

/**
 * How the run's collect was asked for (its options, paths absolute, never a credential): written by the coordinator
 * into the run directory (QUEUE_SPEC_FILE), where each worker reads it from its own storage — a job never carries it.
 */
export const QueueSpec = z.strictObject({
  tasks: z.string().min(1),
  harness: z.string().min(1),
  models: z.array(z.string().min(1)).min(1),
  modelConfig: z.string().optional(),
  runName: z.string().optional(),
  timeoutS: z.number().positive().optional(),
  retries: z.number().int().nonnegative().optional(),
  wireTrace: z.enum(['off', 'actf', 'full']).optional(),
  keepThinking: z.boolean().optional(),
  thinking: z.string().nullable().optional(),
  captureCalls: z.boolean().optional(),
  cacheTrace: z.boolean().optional(),
  harnessProfile: z.string().optional(),
  collectPaths: z.array(z.string()).optional(),
  captureDebug: z.enum(['on-error', 'full', 'off']).optional(),
  runner: z.enum(['local', 'docker']).optional(),
  docker: z
    .strictObject({
      image: z.string().optional(),
      user: z.strictObject({ uid: z.number().int(), gid: z.number().int() }).optional(),
      limits: z.strictObject({ memoryBytes: z.number().nullable().optional(), nanoCpus: z.number().nullable().optional(), pids: z.number().optional() }).optional(),
      network: z.enum(['host', 'proxy']).optional(),
    })
    .optional(),
  harnessVersion: z.string().optional(),
  allowUnverifiedVersion: z.boolean().optional(),
  keyInHarness: z.boolean().optional(),
  agentMayReadKey: z.boolean().optional(),
  maxResultsBytes: z.number().int().positive().optional(),
});
export type QueueSpec = z.infer<typeof QueueSpec>;

/** The run's queue spec, in the run directory. */
export const QUEUE_SPEC_FILE = 'queue.json';

/** One queued sample: where and which; signed with the queue's shared secret (a job anyone else wrote is refused). */
export interface SampleJobData {
  /** The run directory the sample is published into (the same path on every worker: shared storage). */
  run_dir: string;
  run_lock_digest: string;
  index: number;
  task_id: string;
  model: string;
  /** HMAC-SHA256 of the fields above and the queue's name, with ROLLER_QUEUE_SECRET. */
  signature: string;
}

/** The secret every coordinator and worker of a queue holds: jobs are signed and checked with it. */
export function queueSecret(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env.ROLLER_QUEUE_SECRET ?? '';
  if (secret.length < 32) {
    throw new RollerError(
      ErrorCode.INVALID_OPTIONS,
      `${secret === '' ? 'ROLLER_QUEUE_SECRET is not set' : 'ROLLER_QUEUE_SECRET is shorter than 32 characters'}: the coordinator signs each job with it and workers run only jobs it signed (anyone who can write to the Redis could queue work otherwise); set the same one on the collect and every worker, e.g. export ROLLER_QUEUE_SECRET=$(openssl rand -hex 32)`,
    );
  }
  return secret;
}

export function signJob(secret: string, queueName: string, job: Omit<SampleJobData, 'signature'>): string {
  const { run_dir, run_lock_digest, index, task_id, model } = job;
  return createHmac('sha256', secret).update(stableStringify({ queue: queueName, run_dir, run_lock_digest, index, task_id, model })).digest('hex');
}

/** Whether the job was signed with this secret for this queue (every field as signed). */
export function jobSigned(secret: string, queueName: string, job: SampleJobData): boolean {
  if (typeof job?.signature !== 'string' || typeof job.run_dir !== 'string' || typeof job.run_lock_digest !== 'string' || !Number.isInteger(job.index)) return false;
  const expected = Buffer.from(signJob(secret, queueName, job));
  const given = Buffer.from(job.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
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
    ...(o.agentMayReadKey ? { agentMayReadKey: true } : {}),
    ...(o.maxResultsBytes !== undefined ? { maxResultsBytes: o.maxResultsBytes } : {}),
  };
  return spec;
}

/**
 * A Redis without a password lets anyone who reaches it queue or steal jobs: refused unless the URL or
 * ROLLER_REDIS_PASSWORD gives one, or the user accepts that (--redis-no-password).
 */
export function refusePasswordlessRedis(url: string, accepted: boolean, flag = '--queue'): void {
  if (accepted || new URL(url).password !== '' || process.env.ROLLER_REDIS_PASSWORD) return;
  throw new RollerError(
    ErrorCode.INVALID_OPTIONS,
    `${flag} ${redactUrl(url)} has no password (nor is ROLLER_REDIS_PASSWORD set): anyone who reaches that Redis could read and write the queue. Give it one (scripts/redis-server.sh start makes one; redis://:PASSWORD@HOST:PORT or ROLLER_REDIS_PASSWORD), or pass --redis-no-password to accept that`,
  );
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
export async function redisConnection(url: string, onError?: (line: string) => void) {
  const { Redis } = await import('ioredis');
  const password = new URL(url).password === '' ? process.env.ROLLER_REDIS_PASSWORD : undefined;
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true, enableOfflineQueue: true, ...(password ? { password } : {}) });
  // Without a listener ioredis prints every connection error with its stack: one line each instead, a repeat once.
  let last = '';
  redis.on('error', (err: Error) => {
    const line = `Redis at ${redactUrl(url)}: ${err.message.split('\n')[0]} (retrying)`;
    if (line !== last) onError?.(line);
    last = line;
  });
  redis.on('ready', () => (last = ''));
  return redis;
}
