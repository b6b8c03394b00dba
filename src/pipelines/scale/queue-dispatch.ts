import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { redactUrl } from '../../core/redaction.js';
import type { Lock } from '../../schemas/lock.js';
import type { SampleInfo } from '../../schemas/run-info.js';
import { cleanLeftovers } from '../collect/run-dir.js';
import type { CollectOptions } from '../collect/run.js';
import { sampleDirOf, type SampleRequest } from '../collect/sample.js';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { QUEUE_SPEC_FILE, queueSecret, queueSpecOf, redisConnection, sampleJobId, signJob, type QueueTarget, type SampleJobData, type SampleJobResult } from './queue-jobs.js';
import { runLockDigest } from './shard.js';

/** Where workers build samples before publishing them into the run (one directory per worker process). */
export const PARTS_DIR = '.parts';

/** How often the coordinator asks Redis about samples it has heard nothing of (an event lost across a reconnect). */
const RECONCILE_MS = 5_000;

export interface QueueRun {
  requests: readonly SampleRequest[];
  lock: Lock;
  runDir: string;
  reusable: ReadonlyMap<number, SampleInfo>;
  record(info: SampleInfo, status?: SampleInfo['status']): Promise<void>;
  /** A sample no worker could collect (its job failed): the run records it as an error and goes on. */
  fail(request: SampleRequest, message: string): void;
}

/**
 * `roller collect --queue`: each sample not reused becomes a BullMQ job (its id fixed by the run's lock digest and the
 * request index, so a resumed coordinator adds nothing twice); `roller worker`s anywhere run them and publish each into
 * the run directory; this waits for every one (events, and a periodic look at those it has not heard of), recording
 * each published sample as collect records its own. Ctrl-C removes the samples not started yet from the queue.
 */
export async function runOnQueue(o: CollectOptions, target: QueueTarget, r: QueueRun): Promise<void> {
  const secret = queueSecret();
  const { Queue, QueueEvents } = await import('bullmq');
  const where = `Redis at ${redactUrl(target.url)} (queue ${target.name})`;
  const [connection, eventsConnection] = await connected(target.url, where, o.onNotice);
  const queue = new Queue<SampleJobData, SampleJobResult>(target.name, { connection });
  const events = new QueueEvents(target.name, { connection: eventsConnection });
  const digest = runLockDigest(r.lock);
  // How the run was asked for goes in the run directory, where workers read it on their own storage; jobs say only which sample.
  await writeJsonAtomic(join(r.runDir, QUEUE_SPEC_FILE), queueSpecOf(o));
  const pending = new Map<string, SampleRequest>();
  let settled: () => void = () => {};
  let broke: (err: unknown) => void = () => {};
  // Every sample heard of; or recording one failed (a full disk writing info.json): the run stops waiting and says so.
  const allSettled = new Promise<void>((resolve, reject) => ((settled = resolve), (broke = reject)));
  allSettled.catch(() => {}); // awaited below
  const settle = async (jobId: string, failure?: string): Promise<void> => {
    const request = pending.get(jobId);
    if (!request) return;
    pending.delete(jobId);
    const info = failure === undefined ? await publishedInfo(r.runDir, request) : undefined;
    if (info) await r.record(info);
    else r.fail(request, failure ?? `the worker reported sample ${request.index} done, but ${sampleDirOf(r.runDir, request)}/info.json is not there: do the workers write into this run directory (the same path on shared storage)?`);
    if (pending.size === 0) settled();
  };
  try {
    await events.waitUntilReady();
    o.onPlan?.(r.requests.length);
    const toRun: SampleRequest[] = [];
    for (const request of r.requests) {
      const reused = r.reusable.get(request.index);
      if (reused) await r.record(reused, 'skipped');
      else toRun.push(request);
    }
    for (const request of toRun) pending.set(sampleJobId(digest, request.index), request);
    events.on('active', ({ jobId }) => {
      const request = pending.get(jobId);
      if (request) o.onStart?.({ index: request.index, task_id: request.task.id, model: request.model.id });
    });
    events.on('completed', ({ jobId }) => void settle(jobId).catch(broke));
    events.on('failed', ({ jobId, failedReason }) => void settle(jobId, `its job failed on the worker: ${failedReason}`).catch(broke));
    events.on('stalled', ({ jobId }) => {
      const request = pending.get(jobId);
      if (request) o.onNotice?.(`sample ${request.index} (${request.task.id}): its worker stopped answering; it runs again on another`);
    });
    if (pending.size === 0) return;
    await enqueue(queue, toRun.map((request) => signedJob(secret, target.name, r.runDir, digest, request)));
    o.onNotice?.(`${toRun.length} samples queued on ${where}; roller worker --queue … --queue-name ${target.name} runs them (on any machine that sees ${r.runDir})`);
    // A Redis hiccup while looking again is tried again at the next look; a failure to record a sample is not.
    const reconcile = setInterval(() => void lookAgain().catch(() => {}), RECONCILE_MS);
    const lookAgain = async () => {
      for (const jobId of [...pending.keys()]) {
        const job = await queue.getJob(jobId);
        if (!job) await settle(jobId, 'its job is gone from the queue (removed by hand, or Redis lost it)').catch(broke);
        else if (job.finishedOn) await settle(jobId, job.failedReason ? `its job failed on the worker: ${job.failedReason}` : undefined).catch(broke);
      }
    };
    const aborted = new Promise<void>((resolve) => o.signal?.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([allSettled, aborted]);
    } finally {
      clearInterval(reconcile);
    }
    // Interrupted: samples not started are taken off the queue; those running finish on their workers (a resume finds them).
    if (o.signal?.aborted) await unqueue(queue, [...pending.keys()]);
    else await removeParts(r.runDir);
  } finally {
    await events.close();
    await queue.close();
    connection.disconnect();
    eventsConnection.disconnect();
  }
}

type SampleQueue = import('bullmq').Queue<SampleJobData, SampleJobResult>;

/** Whether the queue's Redis answers (and takes our password), before a run directory is made for it. */
export async function checkQueueReachable(target: QueueTarget, onError?: (line: string) => void): Promise<void> {
  const connections = await connected(target.url, `Redis at ${redactUrl(target.url)} (queue ${target.name})`, onError);
  for (const c of connections) c.disconnect();
}

/** Two connections (the queue's, and its events' blocking reads), or a clear error naming the Redis. */
async function connected(url: string, where: string, onError?: (line: string) => void) {
  const connections = [await redisConnection(url, onError), await redisConnection(url)] as const;
  try {
    for (const c of connections) await c.connect();
  } catch (err) {
    for (const c of connections) c.disconnect();
    throw new RollerError(ErrorCode.SERVICE_UNAVAILABLE, `--queue: cannot reach ${where}: ${(err as Error).message}; start Redis (redis-server) or fix the URL`);
  }
  return connections;
}

/** A sample's job: which run and request, signed with the queue's secret. */
function signedJob(secret: string, queueName: string, runDir: string, digest: string, request: SampleRequest): SampleJobData {
  const job = { run_dir: runDir, run_lock_digest: digest, index: request.index, task_id: request.task.id, model: request.model.id };
  return { ...job, signature: signJob(secret, queueName, job) };
}

/**
 * The samples as jobs. A job of an earlier coordinator of this run that has ended is removed first, so that its sample
 * runs again (a resume reuses only what it found published and sound); one still waiting or running is left to finish.
 */
async function enqueue(queue: SampleQueue, jobs: readonly SampleJobData[]): Promise<void> {
  for (const data of jobs) {
    const old = await queue.getJob(sampleJobId(data.run_lock_digest, data.index));
    if (old && ['completed', 'failed'].includes(await old.getState())) await old.remove();
  }
  const keep = { age: 7 * 86_400 };
  await queue.addBulk(jobs.map((data) => ({ name: 'sample', data, opts: { jobId: sampleJobId(data.run_lock_digest, data.index), attempts: 1, removeOnComplete: keep, removeOnFail: keep } })));
}

/** The jobs not started yet, taken off the queue. */
async function unqueue(queue: SampleQueue, jobIds: readonly string[]): Promise<void> {
  for (const jobId of jobIds) {
    const job = await queue.getJob(jobId);
    if (job && ['waiting', 'delayed', 'prioritized'].includes(await job.getState())) await job.remove().catch(() => {});
  }
}

/** The sample a worker published (its info.json, for this request), or undefined. */
async function publishedInfo(runDir: string, request: SampleRequest): Promise<SampleInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(join(sampleDirOf(runDir, request), 'info.json'), 'utf8')) as SampleInfo;
    return info.index === request.index && info.task_id === request.task.id && info.model === request.model.id ? info : undefined;
  } catch {
    return undefined;
  }
}

/** What the workers left building samples (a killed one's half-made sample, its temporary HOME), and the spec they read: gone once all ended. */
async function removeParts(runDir: string): Promise<void> {
  await rm(join(runDir, QUEUE_SPEC_FILE), { force: true });
  const parts = join(runDir, PARTS_DIR);
  if (!existsSync(parts)) return;
  for (const name of await readdir(parts)) await cleanLeftovers(join(parts, name));
  await rm(parts, { recursive: true, force: true });
}
