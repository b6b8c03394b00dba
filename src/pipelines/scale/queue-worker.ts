import { existsSync } from 'node:fs';
import { mkdir, realpath, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { redactUrl } from '../../core/redaction.js';
import { Lock } from '../../schemas/lock.js';
import type { SampleInfo } from '../../schemas/run-info.js';
import type { ScriptedModelServer } from '../../sources/scripted-model/server.js';
import { lockDifferences } from '../collect/lock.js';
import { prepareCollect, resolveRun, sampleSettings, startUpstreams, type CollectOptions } from '../collect/run.js';
import { runSample, sampleDirOf, type SampleRequest, type SampleSettings } from '../collect/sample.js';
import { readChecked } from '../run-reader.js';
import { PARTS_DIR } from './queue-dispatch.js';
import type { ResolvedModel } from '../collect/models.js';
import { jobSigned, QUEUE_SPEC_FILE, QueueSpec, redisConnection, type QueueTarget, type SampleJobData, type SampleJobResult } from './queue-jobs.js';
import { runLockDigest } from './shard.js';

export interface WorkerOptions {
  queue: QueueTarget;
  /** The secret jobs are signed with (ROLLER_QUEUE_SECRET): a job it did not sign is refused. */
  secret: string;
  /** Runs are taken only under these directories (their real paths). */
  runsRoots: string[];
  /** API bases (origin and path prefix) and key variables a run's models may name; any other is refused. */
  allowApiBases?: string[];
  allowKeyEnvs?: string[];
  /** Samples at once in this process. */
  concurrency?: number;
  cacheDir?: string;
  /**
   * Seconds a sample's job stays this worker's without word from it: a worker killed mid-sample has its job run again
   * by another within about twice this (BullMQ's stalled-job check).
   */
  lockS?: number;
  /** Leave once the queue holds no job waiting or running (anyone's) after it ran one, or after UNTIL_EMPTY_WAIT_MS of none; else run until stopped. */
  untilEmpty?: boolean;
  signal?: AbortSignal;
  rollerVersion?: string;
  onNotice?(message: string): void;
  onSample?(data: SampleJobData, result: SampleJobResult | { error: string }): void;
  onStart?(data: SampleJobData): void;
}

/** How long `--until-empty` waits for a first job on a queue that is empty when the worker starts. */
export const UNTIL_EMPTY_WAIT_MS = 60_000;

/** Everything a worker needs to run the samples of one run (by its lock digest), made once per run. */
interface WorkerRun {
  settings: SampleSettings;
  requests: SampleRequest[];
  servers: ScriptedModelServer[];
}

/**
 * `roller worker`: runs queued samples (roller collect --queue) until stopped, any number of them on any machine that
 * sees the run directories at the same paths. A run is planned here exactly as its collect planned it — the same tasks,
 * models, pinned CLI — and refused when the lock this worker would write differs from the run's (the fields named).
 * Each sample is built under <run>/.parts/<host>-<pid>/ and renamed into place whole: a worker killed mid-sample
 * leaves nothing in the run, and BullMQ hands its job to another; if two copies finish, the first in place stays.
 */
export async function runWorker(o: WorkerOptions): Promise<{ processed: number; failed: number; setupCpuMs: number | null }> {
  const { Worker, Queue, UnrecoverableError } = await import('bullmq');
  const id = `${hostname()}-${process.pid}`;
  const runs = new Map<string, Promise<WorkerRun>>();
  // This process's CPU when its first run was planned: what starting and planning cost, apart from the samples.
  const counts: { processed: number; failed: number; setupCpuMs: number | null } = { processed: 0, failed: 0, setupCpuMs: null };
  const connection = await redisConnection(o.queue.url, o.onNotice);
  try {
    await connection.connect();
  } catch (err) {
    connection.disconnect();
    throw new RollerError(ErrorCode.SERVICE_UNAVAILABLE, `roller worker: cannot reach Redis at ${redactUrl(o.queue.url)}: ${(err as Error).message}`);
  }
  const planFor = (data: SampleJobData): Promise<WorkerRun> => {
    let run = runs.get(data.run_lock_digest);
    if (!run) {
      run = planRun(data, o, id).then((planned) => {
        if (counts.setupCpuMs === null) counts.setupCpuMs = cpuMs();
        return planned;
      }, (err: unknown) => {
        runs.delete(data.run_lock_digest);
        throw err;
      });
      runs.set(data.run_lock_digest, run);
    }
    return run;
  };
  const lockMs = Math.round((o.lockS ?? 30) * 1000);
  const worker = new Worker<SampleJobData, SampleJobResult>(
    o.queue.name,
    async (job) => {
      // Anyone who can write to the Redis can add a job: only one the coordinator signed is looked at.
      if (!jobSigned(o.secret, o.queue.name, job.data)) throw new UnrecoverableError(`worker ${id}: job ${job.id} is not signed with this worker's ROLLER_QUEUE_SECRET for queue ${o.queue.name}: refused, nothing run (was it written into the Redis by someone else?)`);
      o.onStart?.(job.data);
      let plan: WorkerRun;
      try {
        plan = await planFor(job.data);
      } catch (err) {
        // This worker cannot run this run's samples (another lock, a CLI it cannot install): no retry helps.
        throw new UnrecoverableError(`worker ${id}: ${(err as Error).message}`);
      }
      const request = plan.requests[job.data.index];
      if (!request || request.task.id !== job.data.task_id || request.model.id !== job.data.model) throw new UnrecoverableError(`worker ${id}: request ${job.data.index} is not ${job.data.task_id} × ${job.data.model} in this worker's plan of the run`);
      return runAndPublish(request, plan.settings, job.data.run_dir, id);
    },
    { connection, autorun: false, concurrency: Math.max(1, o.concurrency ?? 1), lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 2 },
  );
  worker.on('completed', (job, result) => {
    counts.processed++;
    o.onSample?.(job.data, result);
  });
  worker.on('failed', (job, err) => {
    counts.failed++;
    if (job) o.onSample?.(job.data, { error: err.message });
  });
  // BullMQ repeats a lost connection's error at every retry: said once until another comes (or the queue answers).
  let lastError = '';
  worker.on('error', (err) => {
    if (err.message !== lastError) o.onNotice?.(`queue: ${err.message}`);
    lastError = err.message;
  });
  let sawJob = false;
  worker.on('active', () => ((lastError = ''), (sawJob = true)));
  const running = worker.run();
  const stop = () => void worker.close().catch(() => {});
  o.signal?.addEventListener('abort', stop, { once: true });
  const startedAt = Date.now();
  const idleCheck = o.untilEmpty ? whenEmpty(new Queue(o.queue.name, { connection }), () => sawJob || Date.now() - startedAt > UNTIL_EMPTY_WAIT_MS, stop) : undefined;
  try {
    await running;
  } finally {
    if (idleCheck) clearInterval(idleCheck);
    for (const run of runs.values()) await run.then((r) => Promise.all(r.servers.map((s) => s.close()))).catch(() => {});
    connection.disconnect();
  }
  return counts;
}

/**
 * `--until-empty`: stops the worker once the queue holds no job waiting or running and `ready` says it may leave (it
 * ran one, or nothing came for UNTIL_EMPTY_WAIT_MS: a worker started before its collect queued anything waits).
 */
function whenEmpty(queue: import('bullmq').Queue, ready: () => boolean, stop: () => void): NodeJS.Timeout {
  return setInterval(() => {
    void queue
      .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')
      .then((c) => {
        if (Object.values(c).every((n) => n === 0) && ready()) stop();
      })
      .catch(() => {});
  }, 1000);
}

function cpuMs(): number {
  const c = process.cpuUsage();
  return Math.round((c.user + c.system) / 1000);
}

/** The run a job belongs to, planned as its collect planned it; refused when this worker's lock would differ. */
async function planRun(data: SampleJobData, o: WorkerOptions, id: string): Promise<WorkerRun> {
  const runDir = await runDirUnderRoots(data.run_dir, o.runsRoots);
  if (!existsSync(join(runDir, 'lock.json'))) throw new RollerError(ErrorCode.QUEUE_FAILED, `${runDir}/lock.json is not here: this worker does not see the run directory (it must be at the same path on every worker: shared storage)`);
  const spec = await readChecked(QueueSpec, join(runDir, QUEUE_SPEC_FILE), "the run's queue spec (queue.json)");
  const options: CollectOptions = {
    ...spec,
    output: dirname(runDir),
    runName: basename(runDir),
    ...(o.cacheDir ? { cacheDir: o.cacheDir } : {}),
    ...(o.rollerVersion ? { rollerVersion: o.rollerVersion } : {}),
    ...(o.onNotice ? { onNotice: o.onNotice } : {}),
    // Before any model is reached (collect checks each API answers): only the bases and key variables allowed here.
    modelGate: (models) => refuseModelsNotAllowed(models, o),
  };
  const prepared = await prepareCollect(options);
  const resolved = await resolveRun(prepared.options, prepared, runDir);
  if (runLockDigest(resolved.lock) !== data.run_lock_digest) {
    const theirs = await readChecked(Lock, join(runDir, 'lock.json'), 'run lock (lock.json)');
    const diff = lockDifferences(theirs, resolved.lock);
    const version = theirs.roller_version !== resolved.lock.roller_version ? [`roller_version: ${theirs.roller_version} -> ${resolved.lock.roller_version}`] : [];
    throw new RollerError(ErrorCode.QUEUE_FAILED, `this worker would collect ${runDir} under other conditions than its lock (run -> here):\n  ${[...version, ...diff].join('\n  ') || 'the task files or the lock changed'}`);
  }
  const part = join(runDir, PARTS_DIR, id);
  await mkdir(part, { recursive: true, mode: 0o700 });
  const settings = sampleSettings(prepared.options, { installed: resolved.installed, lock: resolved.lock, runDir: part, bundle: prepared.bundle, simulators: prepared.simulators, docker: resolved.docker, wireTrace: resolved.wireTrace });
  const { servers, upstreams } = await startUpstreams([...prepared.models, ...prepared.simulators.values()], resolved.all.length);
  settings.upstreams = upstreams;
  return { settings, requests: resolved.all, servers };
}

/** The run directory's real path, when it lies under one of the worker's roots (else refused, naming them). */
async function runDirUnderRoots(given: string, roots: readonly string[]): Promise<string> {
  const real = await realpath(given).catch(() => null);
  if (real !== null) {
    for (const root of roots) {
      const r = await realpath(root).catch(() => null);
      if (r !== null && (real === r || real.startsWith(r.endsWith(sep) ? r : `${r}${sep}`))) return real;
    }
  }
  throw new RollerError(ErrorCode.QUEUE_FAILED, `${given} is not under this worker's --runs-root (${roots.join(', ')}): refused, nothing run`);
}

/** A run whose models call an API base or read a key variable the worker was not told to allow: refused, naming it. */
function refuseModelsNotAllowed(models: readonly ResolvedModel[], o: WorkerOptions): void {
  for (const m of models) {
    if (m.kind !== 'api') continue;
    const base = m.apiBase.replace(/\/+$/, '');
    const allowedBase = (o.allowApiBases ?? []).some((a) => {
      const x = a.replace(/\/+$/, '');
      return base === x || base.startsWith(`${x}/`);
    });
    if (!allowedBase) throw new RollerError(ErrorCode.QUEUE_FAILED, `model ${m.id} calls ${redactUrl(m.apiBase)}, which this worker does not allow: start it with --allow-api-base ${redactUrl(m.apiBase)} to run this run's samples`);
    const keyEnv = m.config.api_key_env;
    if (typeof keyEnv === 'string' && !(o.allowKeyEnvs ?? []).includes(keyEnv)) throw new RollerError(ErrorCode.QUEUE_FAILED, `model ${m.id} reads its key from ${keyEnv}, which this worker does not allow: start it with --allow-key-env ${keyEnv} to run this run's samples`);
  }
}

/** One sample built in this worker's part, then renamed into the run; a copy already in place wins. */
async function runAndPublish(request: SampleRequest, settings: SampleSettings, runDir: string, id: string): Promise<SampleJobResult> {
  const built = sampleDirOf(settings.runDir, request);
  await rm(built, { recursive: true, force: true }); // an earlier try of this sample in this process
  const info: SampleInfo = await runSample(request, settings);
  const target = sampleDirOf(runDir, request);
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  for (;;) {
    try {
      await rename(built, target);
      return { index: request.index, status: info.status, published: true, worker: id };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
    if (existsSync(join(target, 'info.json'))) {
      await rm(built, { recursive: true, force: true });
      return { index: request.index, status: info.status, published: false, worker: id };
    }
    await rm(target, { recursive: true, force: true }); // not a published sample (no info.json): never one of ours
  }
}
