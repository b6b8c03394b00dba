import { rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDeadTempsIn } from '../../core/dead-leftovers.js';
import { ErrorCode, isRollerError, RollerError } from '../../core/errors.js';
import { acquireLock, describeHolder } from '../../core/process-lock.js';
import { installHarness, type InstalledHarness } from '../../harnesses/installer.js';
import { clearLeftoverContainers, dockerPlan, forRun, prepareTaskImages, type DockerPlan, type DockerRequest } from './docker-plan.js';
import { harnessAdapter } from '../../harnesses/index.js';
import type { Lock } from '../../schemas/lock.js';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import type { WireTraceMode } from '../../sinks/wire-trace/sink.js';
import { startScriptedModel, type ScriptedModelServer } from '../../sources/scripted-model/server.js';
import { redactConfig, redactUrl } from './lock.js';
import { apiUpstream, loadModelConfig, protocolFor, resolveModel, TOKEN_ID_FIELDS, wantsTokenIds, type ModelUpstream, type ResolvedModel } from './models.js';
import { checkModelApis } from './preflight.js';
import { resolveSimulators } from './simulator-models.js';
import { RunInfoBook, resumeHistoryOf } from './run-info-book.js';
import { RunInfoCheckpoints } from './checkpoints.js';
import { cleanLeftovers, endAttemptNotes, prepareRunDir, RUN_LOCK_FILE } from './run-dir.js';
import { MIGRATION_MARKER, previousInfo, resumeCheck, runLock } from './run-lock.js';
export { MIGRATION_MARKER } from './run-lock.js';
import { runSample, sampleDirOf, type SampleRequest, type SampleSettings } from './sample.js';
import { checkPromptSizes, loadTasks } from './tasks.js';
import { isHarborTasks, loadHarborTasks } from './harbor-tasks.js';
import { refuseModels, refuseRunOptions, refuseUnisolatedKeys, refuseUnusedModelConfig } from './refusals.js';
import { inShard, shardRunName, type Shard } from '../scale/shard.js';
import type { QueueTarget } from '../scale/queue-jobs.js';
import { detectIsolation, isolationWarning } from '../../sources/isolation.js';
import { DEFAULT_MAX_RESULTS_BYTES } from './results.js';
import { createStageContext } from '../../core/context.js';
import { itemsOf } from '../../core/document-sink.js';
import { InOrder } from '../../core/in-order.js';
import { createRunInfoSink } from '../../sinks/run-info/sink.js';
import { createRunLockSink } from '../../sinks/run-lock/sink.js';
import type { UserSinks } from '../../sinks/user-sink.js';
import { finishedSample, type FinishedSample } from '../finished-sample.js';
import { runSampleSinks } from '../run-samples.js';
import { openUserSinks, refuseCallSinksWithoutCalls, sinkDeadlines, type SinkSpec, type UserSinkSet } from '../user-sinks.js';

export interface CollectOptions {
  tasks: string;
  /** A harness the registry can run (a runner and a capture contract). */
  harness: string;
  models: string[];
  /** `models` is the CLI's default (no --model given): a model config naming API models is then refused, not ignored. */
  modelsDefaulted?: boolean;
  modelConfig?: string;
  output: string;
  runName?: string;
  concurrency?: number;
  retries?: number;
  resume?: boolean;
  timeoutS?: number;
  wireTrace?: WireTraceMode;
  keepThinking?: boolean;
  thinking?: string | null;
  /**
   * --capture-calls (seeds/000): every model call recorded and capture/ published per sample; off by default. It needs
   * the wire trace; an API model always names its base (api_base) and the docker runner always uses host networking.
   */
  captureCalls?: boolean;
  /** OpenClaw's cache trace (default: on for OpenClaw); no other harness has one, so asking for it elsewhere is an error. */
  cacheTrace?: boolean;
  /** A non-default profile of the harness (its runner's profiles: Pi's example sub-agent extension, OpenClaw's exec); lock.json harness_profile. */
  harnessProfile?: string;
  /** Extra paths (relative to the work dir) copied to results/legacy/ (the older --collect-path). */
  collectPaths?: string[];
  captureDebug?: 'on-error' | 'full' | 'off';
  runner?: 'local' | 'docker';
  /** --runner docker: the image samples run in (never pulled), its user and limits (the pinned CLI is mounted into it, host networking). */
  docker?: DockerRequest;
  cacheDir?: string;
  /** Run this released version of the harness CLI instead of the pinned one (verified versions: docs/VERSIONS.md). */
  harnessVersion?: string;
  /** Run a --harness-version roller has not verified (its records may hold shapes the adapter refuses). */
  allowUnverifiedVersion?: boolean;
  /** Sinks of a user's own (a registered calls/samples sink or a module, with options): see user-sinks.ts. */
  sinkSpecs?: SinkSpec[];
  /** The same as Sink objects (the library): each gets the attributed calls and/or the finished samples of the run. */
  sinks?: UserSinks[];
  /** --sink-timeout: seconds a user sink may take over one item, and to finish (default 120). */
  sinkTimeoutS?: number;
  /** Ctrl-C: queued samples are cancelled, running ones finish and are collected. */
  signal?: AbortSignal;
  onSample?: (info: SampleInfo, progress: { done: number; total: number }) => void;
  onStart?: (request: { index: number; task_id: string; model: string }) => void;
  /** Called once the requests are known: how many samples the run has. */
  onPlan?: (total: number) => void;
  /** --wire-trace off with a keyed model: give the key to the harness itself (refused otherwise). */
  keyInHarness?: boolean;
  /** Called with every model the run names before any is reached (a queue worker refuses APIs it does not allow). */
  modelGate?(models: readonly ResolvedModel[]): void;
  /** A keyed model where the local runner has no process isolation: run anyway (refused otherwise). */
  agentMayReadKey?: boolean;
  /** One sample's results/ limit (--max-results-mb; default 1 GiB): files past it are refused and named. */
  maxResultsBytes?: number;
  /** Something the user should know before samples run (e.g. no process isolation on this machine). */
  onNotice?: (message: string) => void;
  /** A resume found a finished sample it cannot reuse for a defect (its capture fails validation): it runs again. */
  onNotReused?: (sampleDir: string, why: string) => void;
  rollerVersion?: string;
  /** --queue: samples are jobs on a BullMQ queue in Redis, run by `roller worker`s into this run directory (shared storage). */
  queue?: QueueTarget;
  /** --shard I/N: only the requests whose index ≡ I (mod N), into <run-name>.shard-I-of-N; lock.json names the whole run. */
  shard?: Shard;
}


export interface CollectResult {
  runDir: string;
  info: RunInfo;
}

/**
 * `roller collect`: every task × model through the harness, each sample in its own attempt directories,
 * recorded by the proxy, converted and published; lock.json first (resume compares it field by field before
 * any harness starts), info.json at checkpoints, run-level sft.jsonl at the end (partial on interrupt).
 */
export async function collect(o: CollectOptions): Promise<CollectResult> {
  const prepared = await prepareCollect(o);
  o = prepared.options;
  const { bundle, models, simulators, docker, delegationOff } = prepared;
  // Every shard must name the same run: a default name (the time) would differ from machine to machine.
  if (o.shard && !o.runName) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--shard needs --run-name (the same on every shard: roller merge joins <run-name>.shard-I-of-N)');
  if (o.shard && o.queue) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--shard and --queue split a run two ways: give one');
  const baseName = o.runName ?? `${o.harness}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runName = o.shard ? shardRunName(baseName, o.shard) : baseName;
  // The run directory and its process lock before anything runs: a second collect, resume or reprocess into the run
  // is refused while this one holds it; a lock left by a killed run is taken over only by --resume.
  // The user's sinks (--sink, or the library's `sinks`): loaded and their options checked before anything is made.
  const user = await openUserSinks(o.sinkSpecs ?? [], o.sinks ?? [], process.cwd(), sinkDeadlines(o.sinkTimeoutS));
  if (!o.captureCalls) await refuseCallSinksWithoutCalls(user, 'pass --capture-calls (the library: captureCalls: true)');
  let runDir: string;
  try {
    // A queue that does not answer leaves nothing behind: checked before the run directory is made.
    if (o.queue) await (await import('../scale/queue-dispatch.js')).checkQueueReachable(o.queue, o.onNotice);
    runDir = await prepareRunDir(o.output, runName);
  } catch (err) {
    await user.end();
    throw err;
  }
  const held = await acquireLock(join(runDir, RUN_LOCK_FILE), {
    what: `the run ${runDir}`,
    command: `roller collect${o.resume ? ' --resume' : ''}`,
    takeOverStale: o.resume === true,
    staleHint: 'pass --resume to take it over and continue the run',
  }).catch(async (err: unknown) => {
    await user.end();
    throw err;
  });
  let result: CollectResult;
  try {
    // A killed collect's half-written run files (sft.jsonl.PID.tmp, .info.json.PID.HEX.tmp) go before this one writes.
    await removeDeadTempsIn(runDir);
    result = await collectLocked(o, { bundle, models, simulators, runName, runDir, docker, user, tookOver: held.tookOver ? describeHolder(held.tookOver) : null, delegationOff });
  } catch (err) {
    await user.end();
    // A refused resume leaves the run as it found it: a killed run's stale lock stays, for the resume that matches.
    const stays = await held.release({ handBack: true }).then(() => undefined, (e: unknown) => e);
    await rmdir(runDir).catch(() => undefined); // a run directory this call made and left empty goes again
    throw stays ? lockStays(err, held.path, stays) : err;
  }
  const stays = await held.release().then(() => undefined, (e: unknown) => e);
  if (stays) throw lockStays(undefined, held.path, stays);
  return result;
}

/**
 * The run's lock could not be removed (the filesystem went read-only, the disk failed): the first failure is still
 * the one said, with where the lock is and that the next --resume takes it over (its process will be gone).
 */
function lockStays(first: unknown, lockPath: string, failure: unknown): RollerError {
  const why = (failure as NodeJS.ErrnoException).code ?? (failure as Error).message;
  const note = `the run's lock ${lockPath} stays (removing it failed: ${why}); once the filesystem is writable again, roller collect --resume takes it over`;
  if (first === undefined) return new RollerError(ErrorCode.OUTPUT_UNUSABLE, `the run finished, but ${note}`, { cause: failure });
  // A refusal stays one; else the lock's own failure is the cause (EROFS, EIO: the machine's fault, which Node's
  // recursive mkdir may have reported as ENOENT in the first failure).
  if (isRollerError(first, ErrorCode.INVALID_OPTIONS)) return new RollerError(first.code, `${first.message}; ${note}`, { cause: first });
  return new RollerError(isRollerError(first) ? first.code : ErrorCode.OUTPUT_UNUSABLE, `${(first as Error).message ?? String(first)}; ${note}`, { cause: failure });
}

/** What a collect is checked and planned with before any run directory exists (a queue worker plans the same). */
export interface PreparedCollect {
  /** The options as the harness's runner settles them (its cache trace default). */
  options: CollectOptions;
  bundle: Awaited<ReturnType<typeof loadTasks>>;
  models: ResolvedModel[];
  simulators: Map<string, ResolvedModel>;
  docker: DockerPlan | undefined;
  delegationOff: string | null;
}

/** The tasks, models and runner of a collect, every option checked (refused with what to do) before anything runs. */
export async function prepareCollect(o: CollectOptions): Promise<PreparedCollect> {
  const bundle = (await isHarborTasks(o.tasks)) ? await loadHarborTasks(o.tasks) : await loadTasks(o.tasks);
  const harbor = bundle.tasks.some((t) => t.harbor);
  if (harbor && o.runner !== 'docker') throw new RollerError(ErrorCode.INVALID_OPTIONS, `${o.tasks}: Harbor tasks run in their own image: pass --runner docker (scripts/docker-engine.sh starts an engine)`);
  if (o.runner === 'docker' && !o.docker?.image && !harbor) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--runner docker needs --image (an image with the runtime the harness CLI needs: scripts/docker-engine.sh base-image builds one)');
  if (o.docker?.network === 'proxy' && o.wireTrace === 'off') throw new RollerError(ErrorCode.INVALID_OPTIONS, '--docker-network proxy reaches only the recording proxy, and --wire-trace off runs none: the harness could reach no model; use --docker-network host');
  const docker = o.runner === 'docker' ? await dockerPlan(o.docker ?? {}) : undefined;
  const adapter = harnessAdapter(o.harness);
  const runner = adapter.runner;
  if (!runner || !adapter.nativeCapture) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--harness ${o.harness}: roller cannot run it here (no pinned CLI); its native files convert with roller convert`);
  o = { ...o, cacheTrace: refuseRunOptions(o, runner) };
  const modelConfig = await loadModelConfig(o.modelConfig);
  // Each model in the protocol the harness is configured to call it in (its own, or the config's where it speaks it).
  const models: ResolvedModel[] = o.models.map((m) => resolveModel(m, modelConfig)).map((m) => ({ ...m, protocol: protocolFor(m, o.harness, runner.protocols) }));
  refuseModels(o, runner, models, bundle.tasks);
  checkPromptSizes(o.harness, runner.maxPromptBytes, bundle);
  const simulators = resolveSimulators(bundle.tasks, o.harness, runner, modelConfig, o.tasks);
  if (o.modelsDefaulted) refuseUnusedModelConfig(o, modelConfig, simulators);
  o.modelGate?.([...models, ...simulators.values()]);
  refuseUnisolatedKeys(o, [...models, ...simulators.values()]);
  await checkModelApis(models);
  await checkModelApis([...simulators.values()].filter((m) => !models.some((n) => n.id === m.id)), undefined, (m) => `user_simulator.model ${m.id} (${o.tasks})`);
  // A harness run without its delegation tool cannot delegate: said now, not discovered in the answers.
  const delegationOff = runner.delegationOff?.({ captureCalls: o.captureCalls ?? false, profile: o.harnessProfile ?? null }) ?? null;
  if (delegationOff) o.onNotice?.(`${o.harness} runs without its delegation tool: ${delegationOff} (a task that asks it to delegate cannot)`);
  return { options: o, bundle, models, simulators, docker, delegationOff };
}

interface RunPlan {
  bundle: Awaited<ReturnType<typeof loadTasks>>;
  models: ResolvedModel[];
  simulators: Map<string, ResolvedModel>;
  runName: string;
  runDir: string;
  docker: DockerPlan | undefined;
  /** The killed collect whose stale lock was taken over (--resume). */
  tookOver: string | null;
  /** Why the harness runs without its delegation tool (said at the start), or null. */
  delegationOff: string | null;
  user: UserSinkSet;
}

/** A prepared collect made concrete for one run directory: its task images, requests, installed harness and lock. */
export interface ResolvedRun {
  docker: DockerPlan | undefined;
  /** Every request of the run, in order (a shard runs some of them). */
  all: SampleRequest[];
  installed: InstalledHarness;
  wireTrace: WireTraceMode;
  lock: Lock;
}

export async function resolveRun(o: CollectOptions, p: Pick<PreparedCollect, 'bundle' | 'models' | 'simulators' | 'docker'>, runDir: string): Promise<ResolvedRun> {
  const docker = p.docker && (await prepareTaskImages(forRun(p.docker, runDir), p.bundle.tasks, o.onNotice));
  const all = p.models.flatMap((model) => p.bundle.tasks.map((task) => ({ task, model }))).map((r, index) => ({ ...r, index }));
  const installed = await installHarness(o.harness, { ...(o.cacheDir ? { cacheDir: o.cacheDir } : {}), ...(o.harnessVersion ? { version: o.harnessVersion } : {}), ...(o.onNotice ? { onProgress: o.onNotice } : {}) });
  const wireTrace = o.wireTrace ?? 'actf';
  const lock = runLock(o, all, p.bundle.digest, installed.version, p.models, p.simulators, docker, wireTrace);
  return { docker, all, installed, wireTrace, lock };
}

async function collectLocked(o: CollectOptions, plan: RunPlan): Promise<CollectResult> {
  const { bundle, models, simulators, runName, runDir } = plan;
  const { docker, all, installed, wireTrace, lock } = await resolveRun(o, plan, runDir);
  // A shard runs its share of the requests; its lock still lists them all (and names the shard).
  const requests = all.filter((r) => inShard(r.index, o.shard));

  const previous = o.resume ? await previousInfo(runDir) : undefined;
  const { reusable, lockToWrite } = await resumeCheck(o, runDir, lock, requests, bundle.digest, wireTrace, previous);
  if (lockToWrite) await createRunLockSink({ path: join(runDir, 'lock.json') }).consume(itemsOf(lockToWrite), createStageContext());
  // A killed run's containers go first: one still running writes into its sample's temporary directory.
  if (docker) await clearLeftoverContainers(docker, runDir, o.onNotice);
  // What a killed run left (its samples' temporary directories) goes once this resume is known to continue it.
  const cleaned = o.resume ? await cleanLeftovers(runDir, o.onNotice) : [];

  const config = redactConfig({ harness: o.harness, models: o.models, model_config: o.modelConfig ?? null, tasks: o.tasks, concurrency: o.concurrency ?? 1, retries: o.retries ?? 0, timeout_s: lock.timeout_s, ...lock.options, harness_profile: lock.harness_profile ?? null, runner: o.runner ?? 'local', image: o.docker?.image ?? null, ...(o.queue ? { queue: redactUrl(o.queue.url), queue_name: o.queue.name } : {}), ...(o.shard ? { shard: `${o.shard.index}/${o.shard.count}` } : {}) }) as Record<string, unknown>;
  const book = new RunInfoBook({
    rollerVersion: lock.roller_version,
    runName,
    runDir,
    createdAt: previous?.created_at ?? new Date().toISOString(),
    config,
    delegationOff: plan.delegationOff,
    requests: { total: requests.length, tasks: bundle.tasks.length, models: models.length },
    // What the lock does not hold may change on a resume (it does not change the data); each resume says what it changed.
    resumeHistory: resumeHistoryOf(previous, o.resume === true, config, plan.tookOver, cleaned),
  });
  const infoSink = createRunInfoSink({ path: join(runDir, 'info.json') });
  const writeInfo = async (): Promise<void> => void (await infoSink.consume(itemsOf(book.snapshot()), createStageContext()));
  await writeInfo();
  book.state = 'running';
  const checkpoints = new RunInfoCheckpoints(writeInfo);
  // Ctrl-C / SIGTERM: info.json says so at once (queued samples are cancelled, running ones finish after).
  o.signal?.addEventListener('abort', () => void checkpoints.interrupted().catch(() => {}), { once: true });

  const settings = sampleSettings(o, { installed, lock, runDir, bundle, simulators, docker, wireTrace });
  const unisolated = docker ? undefined : isolationWarning(settings.isolation);
  if (unisolated) o.onNotice?.(unisolated);
  // The sample stream, in request order: the run-level SFT files and the user's sinks take each finished sample.
  const order = new InOrder<FinishedSample>(requests.length);
  const position = new Map(requests.map((r, i) => [r.index, i]));
  const samples = runSampleSinks(runDir, order, plan.user);
  samples.catch(() => {}); // awaited below; a failure must not go unhandled meanwhile
  let done = 0;
  const record = async (info: SampleInfo, status = info.status) => {
    book.add(info, status);
    o.onSample?.({ ...info, status }, { done: ++done, total: requests.length });
    order.settle(position.get(info.index)!, finishedSample(sampleDirOf(runDir, { index: info.index, task: { id: info.task_id }, model: { id: info.model } }), info));
    await checkpoints.result();
  };
  const run = o.queue
    ? (await import('../scale/queue-dispatch.js')).runOnQueue(o, o.queue, {
        requests,
        lock,
        runDir,
        reusable,
        record,
        fail: (r, message) => void book.errors.push({ code: ErrorCode.QUEUE_FAILED, message: `sample ${r.index} (${r.task.id}, ${r.model.id}) was not collected: ${message}; roller collect --resume --queue queues it again`, at: new Date().toISOString() }),
      })
    : runRequests(o, requests, settings, [...models, ...simulators.values()], reusable, record);
  await run.finally(() => endAttemptNotes(runDir));

  book.state = 'finalizing';
  await checkpoints.force();
  try {
    order.settleRest(); // samples never run (Ctrl-C) contribute nothing
    const written = await samples;
    book.sftCounts = { included: written.included, segmented: written.segmented, total: requests.length };
    for (const f of written.sinkFailures) book.errors.push({ code: ErrorCode.SINK_WRITE_FAILED, message: `sink ${f.sink} failed${f.at ? ` at ${f.at}` : ''}: ${f.message}; the run's own files are complete`, at: new Date().toISOString() });
    book.state = o.signal?.aborted ? 'interrupted' : 'finished';
    if (book.state === 'finished') await rm(join(runDir, MIGRATION_MARKER), { force: true });
  } catch (err) {
    book.state = 'finalization_error';
    await checkpoints.force();
    throw err;
  }
  await checkpoints.force();
  return { runDir, info: book.snapshot() };
}

/**
 * Every request through `concurrency` workers (a reused sample recorded as skipped), each on its model's upstream:
 * one embedded scripted model per scripted model id for the whole run (its runaway cap scaled to the run), an API
 * model's base. Queued samples are cancelled on abort; running ones finish.
 */
async function runRequests(o: CollectOptions, requests: readonly SampleRequest[], settings: SampleSettings, models: readonly ResolvedModel[], reusable: ReadonlyMap<number, SampleInfo>, record: (info: SampleInfo, status?: SampleInfo['status']) => Promise<void>): Promise<void> {
  const { servers, upstreams } = await startUpstreams(models, requests.length);
  settings.upstreams = upstreams;
  o.onPlan?.(requests.length);
  const queue = [...requests];
  const worker = async () => {
    for (let r = queue.shift(); r; r = queue.shift()) {
      if (o.signal?.aborted) return;
      const reused = reusable.get(r.index);
      if (reused) await record(reused, 'skipped');
      else {
        o.onStart?.({ index: r.index, task_id: r.task.id, model: r.model.id });
        await record(await runSample(r, settings));
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 1) }, worker));
  } finally {
    for (const server of servers) await server.close();
  }
}

/** What every sample of the run is collected with. */
export function sampleSettings(
  o: CollectOptions,
  r: { installed: InstalledHarness; lock: Lock; runDir: string; bundle: RunPlan['bundle']; simulators: Map<string, ResolvedModel>; docker: RunPlan['docker']; wireTrace: WireTraceMode },
): SampleSettings {
  return {
    harness: o.harness,
    ...(o.onNotice ? { onProgress: o.onNotice } : {}),
    harnessVersion: r.installed.version,
    bin: r.installed.bin,
    runDir: r.runDir,
    taskDigest: r.bundle.digest,
    timeoutS: r.lock.timeout_s,
    retries: o.retries ?? 0,
    wireTrace: r.wireTrace,
    keepThinking: o.keepThinking ?? true,
    captureCalls: o.captureCalls ?? false,
    cacheTrace: o.cacheTrace ?? false,
    captureDebug: o.captureDebug ?? 'on-error',
    upstreams: new Map(),
    simulators: r.simulators,
    installDir: r.installed.dir,
    ...(r.installed.runtime ? { runtime: r.installed.runtime } : {}),
    collectPaths: o.collectPaths ?? [],
    thinking: o.thinking ?? null,
    profile: r.lock.harness_profile ?? null,
    ...(r.docker ? { docker: r.docker } : {}),
    maxResultsBytes: o.maxResultsBytes ?? DEFAULT_MAX_RESULTS_BYTES,
    isolation: r.docker ? { pidNamespace: false, reason: 'the container is the boundary' } : detectIsolation(),
  };
}

/** One embedded scripted model server per scripted model id (its runaway cap scaled to the run); an API model's base. */
export async function startUpstreams(all: readonly ResolvedModel[], requests: number): Promise<{ servers: ScriptedModelServer[]; upstreams: Map<string, ModelUpstream> }> {
  const servers: ScriptedModelServer[] = [];
  const upstreams = new Map<string, ModelUpstream>();
  for (const m of all) {
    // A model the harness and a user simulator share keeps the harness's upstream (its protocol's path mapping).
    if (m.kind === 'api') upstreams.set(m.id, upstreams.get(m.id) ?? apiUpstream(m));
    else if (!upstreams.has(m.id)) {
      const server = await startScriptedModel({ script: { ...m.script, max_requests: m.script.max_requests * Math.max(1, requests) } });
      servers.push(server);
      upstreams.set(m.id, { url: server.url, ...(wantsTokenIds(m) ? { bodyFields: TOKEN_ID_FIELDS } : {}) });
    }
  }
  return { servers, upstreams };
}
