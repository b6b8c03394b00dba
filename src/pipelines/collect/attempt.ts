import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { scriptErrorOf } from './script-error.js';
import type { Call } from '../../schemas/call.js';
import { readCallsLazily } from '../../sources/archive/calls-reader.js';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ErrorCode, isRollerError } from '../../core/errors.js';
import { refuseLinksBelow } from '../../core/inside-root.js';
import { harnessAdapter, proxyHeaders } from '../../harnesses/index.js';
import type { CaptureFailure, HarnessRunner, RunLaunch } from '../../harnesses/adapter.js';
import { runInDocker, type DockerRunOptions } from '../../sources/docker-runner.js';
import { seedWorkDir } from '../../sources/docker-images.js';
import { containerFor, verifierMounts, workMounts, type DockerPlan } from './docker-plan.js';
import { runProcess, type ProcessPlan } from '../../sources/process-runner.js';
import { isolationWarning } from '../../sources/isolation.js';
import { WIRE_LOG_FILE } from '../../sources/proxy/wire-log.js';
import { startProxyPipeline } from '../proxy.js';
import { keepCacheTrace } from './cache-trace.js';
import { bypassMessage, changedConfigFiles, configStates, newStandIn, plantedConfigFiles, proxyAdmission } from './custody.js';
import { runGrader } from './grader.js';
import { firstUpstreamFailure, lastCallFailure } from './preflight.js';
import { projectAttempt } from './project-attempt.js';
import { fixedPrompts, simulatedPrompts } from './prompt-source.js';
import { copyResults } from './results.js';
import { ATTEMPT_DIR_PREFIX, noteAttempt, removeScratch } from './run-dir.js';
import type { AttemptResult, SampleRequest, SampleSettings } from './sample.js';
import type { ModelUpstream } from './models.js';
import { refuseHarnessConfigFiles } from './tasks.js';
import { UserSimulator } from './user-simulator.js';
import { writeDialogueFiles } from './user-simulator-files.js';

type ProxyPipeline = Awaited<ReturnType<typeof startProxyPipeline>>;
type ProcessOutcome = Awaited<ReturnType<typeof runProcess>>;

/** One attempt's places and what it has found so far: each step below reads it and adds to its result. */
interface Attempt {
  r: SampleRequest;
  s: SampleSettings;
  dir: string;
  attempt: number;
  runner: HarnessRunner;
  runtime: string;
  home: string;
  work: string;
  captureWork: string;
  logs: Record<string, string> & { stdout: string; stderr: string };
  result: AttemptResult;
  timeoutS: number;
  simulator?: UserSimulator;
  /** The proxy's calls.jsonl, read once after the run (or why it could not be read). */
  calls?: Call[] | Error;
  /** The port of the attempt's recording proxy on 127.0.0.1 (a container on the 'proxy' network reaches only it). */
  proxyPort?: number;
  /** The first failure is the attempt's (later ones are consequences). */
  fail(status: 'error' | 'timeout', code: string, message: string): void;
}

/** How the prompts ran: the last process's outcome, and what the judging needs to know. */
interface PromptsRun {
  outcome: ProcessOutcome | undefined;
  lastStderr: string;
  lastPromptRan: boolean;
  /** The prompt that was never started because the sample's time had run out (0: none). */
  outOfTime: number;
  promptsRun: number;
  /** The harness's user-level configuration files a prompt's run changed (roller rewrites them before the next). */
  agentWroteHome: Set<string>;
}

/**
 * One complete attempt of a sample, in a fresh HOME and work directory (seeds/003 §7.3): the task's files written,
 * the prompts run through the attempt's recording proxy, the run judged, the native session projected into the
 * sample, the task output copied, the grader run, the dialogue's files written; a failed attempt's logs kept.
 */
export async function runAttempt(r: SampleRequest, s: SampleSettings, dir: string, attempt: number): Promise<AttemptResult> {
  const started = Date.now();
  const runtime = await mkdtemp(join(tmpdir(), `${ATTEMPT_DIR_PREFIX}${r.index}-`));
  // Noted in the run until it is removed: a run killed meanwhile leaves it for --resume to clean.
  const forget = await noteAttempt(s.runDir, { index: r.index, attempt, runtime });
  const logs = { stdout: join(runtime, 'stdout.log'), stderr: join(runtime, 'stderr.log') };
  const result: AttemptResult = { harnessReported: null, audits: null, status: 'ok', error: null, elapsedMs: 0, participants: [], requests: 0, conversion: null, results: [], capture: null, logs, warnings: [], captureFailures: [], harnessMs: 0 };
  const a: Attempt = {
    r, s, dir, attempt, runtime, logs, result,
    runner: harnessAdapter(s.harness).runner!,
    home: join(runtime, 'home'),
    work: join(runtime, 'work'),
    captureWork: join(runtime, 'capture'),
    timeoutS: r.task.timeout_s ?? s.timeoutS,
    fail(status, code, message) {
      if (result.status !== 'ok') return;
      result.status = status;
      result.error = { code, message, at: new Date().toISOString() };
    },
  };
  try {
    await writeTaskFiles(a);
    const workdir = s.docker ? containerFor(s.docker, r.task).workdir : null;
    if (s.docker && workdir) await seedWorkDir(s.docker.api, s.docker.container, s.docker.taskImages.get(r.task.id)!, a.work, runtime);
    // --wire-trace off starts no recording proxy (seeds/003): the CLI calls the model API itself, nothing is recorded.
    // Key custody: the harness gets a stand-in made for this attempt; only its proxy holds the model's key.
    const standIn = newStandIn();
    const credential = { standIn, key: r.model.apiKey };
    const upstream = s.upstreams.get(r.model.id)!;
    const pipeline = s.wireTrace === 'off' ? null : await startProxyPipeline({ ...proxyUpstream(upstream), outDir: a.captureWork, wireTrace: 'full', credential, ...proxyHeaders(s.harness) });
    const scope = pipeline?.proxy.captureScope ?? randomBytes(4).toString('hex');
    if (pipeline) a.proxyPort = Number(new URL(pipeline.proxy.url).port);
    const run = await runPrompts(a, pipeline, upstream, standIn);
    await judgeRun(a, pipeline, run);
    await projectInto(a, pipeline, scope);
    await keepTaskOutput(a);
    await gradeAndRecordDialogue(a, run.outcome);
  } catch (err) {
    await brokeOff(a, err);
  } finally {
    await keepFailedAttemptEvidence(a);
    const failed = await removeScratch(runtime);
    if (failed) result.warnings.push(`the attempt's temporary directory ${runtime} was not removed (${failed}): a process the harness started may still be writing there`);
    await forget();
  }
  result.elapsedMs = Date.now() - started;
  return result;
}

/** The proxy options of a model's upstream. */
function proxyUpstream(u: ModelUpstream): { upstream: string; clientBasePath?: string; upstreamHeaders?: Readonly<Record<string, string>>; upstreamBodyFields?: Readonly<Record<string, unknown>> } {
  return { upstream: u.url, ...(u.clientBasePath ? { clientBasePath: u.clientBasePath } : {}), ...(u.headers ? { upstreamHeaders: u.headers } : {}), ...(u.bodyFields ? { upstreamBodyFields: u.bodyFields } : {}) };
}

/** The container of this sample (its task's image, resources and variables), on the host's network or none. */
function inContainer(a: Attempt, docker: DockerPlan, network?: 'none'): Pick<DockerRunOptions, 'container' | 'docker' | 'env' | 'proxyPort'> {
  const { container, env } = containerFor(docker, a.r.task);
  return { container: network ? { ...container, network } : container, docker: docker.api, env, ...(a.proxyPort ? { proxyPort: a.proxyPort } : {}) };
}

/** The task's files in the work directory; one that is the harness's own configuration is refused first. */
async function writeTaskFiles({ r, s, runner, work }: Attempt): Promise<void> {
  await mkdir(work, { recursive: true });
  // A task file that is the harness's own configuration could move its model calls away from the proxy: refused.
  refuseHarnessConfigFiles([r.task], s.harness, runner.configFiles ?? []);
  for (const [rel, text] of Object.entries(r.task.files ?? {})) {
    await mkdir(join(work, rel, '..'), { recursive: true });
    await writeFile(join(work, rel), text);
  }
}

/**
 * The task's prompt, then its follow-ups or the user simulator's messages in the same session (Claude Code: --resume
 * the session the first prompt opened), each its own process within the sample's one timeout; the first that fails
 * ends the sample. The simulator and the proxy are closed before this returns.
 */
async function runPrompts(a: Attempt, pipeline: ProxyPipeline | null, upstream: ModelUpstream, standIn: string): Promise<PromptsRun> {
  const { r, s, runner, runtime, logs, timeoutS, fail } = a;
  const done: PromptsRun = { outcome: undefined, lastStderr: logs.stderr, lastPromptRan: false, outOfTime: 0, promptsRun: 0, agentWroteHome: new Set() };
  const spec = r.task.user_simulator;
  try {
    if (spec) {
      const model = s.simulators.get(spec.model)!;
      a.simulator = await UserSimulator.start(spec, model, s.upstreams.get(model.id)!, join(runtime, 'user-simulator-capture'), r.task.prompt, timeoutS * 1000);
    }
    const simulator = a.simulator;
    const launch = launchOf(a, pipeline, upstream, standIn);
    // The timeout is the sample's: every prompt's process together (follow-ups and simulated turns included).
    const deadline = Date.now() + timeoutS * 1000;
    const source = simulator ? simulatedPrompts(r.task, simulator, runner) : fixedPrompts(r.task);
    let prompt = source.first;
    let sessionId: string | null = null;
    for (let k = 0; ; k++) {
      const suffix = k === 0 ? '' : `.${k + 1}`;
      const out = { stdout: join(runtime, `stdout${suffix}.log`), stderr: join(runtime, `stderr${suffix}.log`) };
      if (k > 0) Object.assign(logs, { [`stdout${suffix}`]: out.stdout, [`stderr${suffix}`]: out.stderr });
      const leftMs = deadline - Date.now();
      if (leftMs < 1000) {
        done.outOfTime = k + 1;
        simulator?.end({ reason: 'task_agent_failed', after_turn: k, detail: `the sample's ${timeoutS} s ran out before prompt ${k + 1}` });
        break;
      }
      const plan = await runner.plan({ ...launch, timeoutS: Math.ceil(leftMs / 1000), prompt, ...(sessionId ? { continueSession: sessionId } : {}) });
      const run = { timeoutMs: leftMs, stdoutPath: out.stdout, stderrPath: out.stderr };
      done.promptsRun = k + 1;
      const outcome = await runPromptProcess(a, plan, run, done.agentWroteHome);
      done.outcome = outcome;
      done.lastStderr = out.stderr;
      if (outcome.timedOut || outcome.exitCode !== 0 || source.isLast(k)) {
        done.lastPromptRan = source.isLast(k);
        break;
      }
      const next = await source.next(k, out.stdout);
      if (next.kind === 'fail') fail('error', next.code, next.message);
      if (next.kind !== 'next') {
        done.lastPromptRan = next.kind === 'end';
        break;
      }
      sessionId = (await runner.sessionOfStdout?.(out.stdout)) ?? null;
      if (!sessionId) {
        simulator?.pending.push(next.text);
        simulator?.end({ reason: 'task_agent_failed', after_turn: k + 1, detail: 'no session id to continue' });
        fail('error', ErrorCode.HARNESS_FAILED, `prompt ${k + 1}: the harness reported no session id on stdout, so the next prompt cannot continue its session`);
        break;
      }
      simulator?.delivered(next.text, k + 2);
      if (simulator) s.onProgress?.(`${r.index}_${r.task.id}: dialogue turn ${k + 2}, the simulated user says ${JSON.stringify(next.text.length > 80 ? `${next.text.slice(0, 80)}…` : next.text)}`);
      prompt = next.text;
    }
  } finally {
    const simFailure = await a.simulator?.close();
    if (simFailure) fail('error', ErrorCode.USER_SIMULATOR_FAILED, `recording the user simulator's calls failed: ${simFailure.message}`);
    if (pipeline) {
      await pipeline.proxy.close();
      await pipeline.done.catch((err: unknown) => fail('error', isRollerError(err) ? err.code : ErrorCode.SINK_WRITE_FAILED, `projecting the captured calls failed: ${(err as Error).message}`));
    }
  }
  return done;
}

/** What every prompt's launch of the sample shares: the CLI, its HOME and work dir, the proxy (or the model's own base). */
function launchOf(a: Attempt, pipeline: ProxyPipeline | null, upstream: ModelUpstream, standIn: string): Omit<RunLaunch, 'prompt'> {
  const { r, s, home, work, timeoutS } = a;
  return {
    bin: s.bin,
    version: s.harnessVersion,
    home,
    work,
    // No proxy (--wire-trace off): the SDK base less the /v1 the harness's SDK puts back (refusals.ts checks it ends so).
    baseUrl: pipeline ? pipeline.proxy.url : upstream.url.replace(/\/+$/, '').slice(0, upstream.clientBasePath ? -upstream.clientBasePath.length : undefined),
    ...(pipeline ? {} : { recorded: false }),
    // --wire-trace off runs no proxy; it is refused for a model with a key (collect/run.ts), so this is never one.
    apiKey: pipeline ? standIn : r.model.apiKey,
    ...(r.model.kind === 'api' ? { model: r.model.modelName } : {}),
    ...(r.model.protocol ? { protocol: r.model.protocol } : {}),
    ...(s.thinking ? { thinking: s.thinking } : {}),
    captureCalls: s.captureCalls,
    cacheTrace: s.cacheTrace,
    ...(r.model.context ? { context: r.model.context } : {}),
    ...(s.runtime ? { runtime: s.runtime } : {}),
    timeoutS,
    profile: s.profile,
  };
}

/** One prompt's process, locally or in its container; user-level configuration it changed is named in `agentWroteHome`. */
async function runPromptProcess(a: Attempt, plan: ProcessPlan, run: { timeoutMs: number; stdoutPath: string; stderrPath: string }, agentWroteHome: Set<string>): Promise<ProcessOutcome> {
  const { s, runner, home, result } = a;
  const homeConfig = await configStates(home, runner.homeConfigFiles ?? []);
  const outcome = s.docker
    ? // Host networking: the container reaches this sample's proxy on the host's loopback.
      await runInDocker(plan, { ...run, ...inContainer(a, s.docker), mounts: [...workMounts(home, a.work, containerFor(s.docker, a.r.task).workdir), { path: s.installDir, readOnly: true }] })
    : await runProcess(plan, { ...run, isolation: s.isolation });
  result.harnessMs += outcome.durationMs;
  for (const f of await changedConfigFiles(home, homeConfig)) agentWroteHome.add(`~/${f}`);
  return outcome;
}

/** The run judged, the cause said first: a bypassed proxy, configuration the agent wrote, a timeout, an exit code. */
async function judgeRun(a: Attempt, pipeline: ProxyPipeline | null, run: PromptsRun): Promise<void> {
  const { s, runner, home, work, captureWork, result, timeoutS, fail, simulator } = a;
  const { outcome, outOfTime, promptsRun, lastPromptRan, lastStderr, agentWroteHome } = run;
  let drained: CaptureFailure | null | undefined;
  const unisolated = s.docker ? undefined : isolationWarning(s.isolation);
  if (unisolated) result.warnings.push(unisolated);
  // A harness that called its model anywhere but through its proxy with the stand-in: the cause, said first.
  // The proxy's calls, read once here for every stage after (a damaged file is the projection's error, said there).
  if (pipeline) a.calls = await readCallsLazily(join(captureWork, 'calls.jsonl')).catch((err: Error) => (existsSync(join(captureWork, 'calls.jsonl')) ? err : []));
  const calls = Array.isArray(a.calls) ? a.calls : [];
  const admission = proxyAdmission(calls);
  // A harness that failed before any call (it could not start, say) bypassed nothing: its failure is the cause.
  const failedSilent = outcome?.exitCode !== 0 && admission.calls === 0;
  const bypassed = pipeline && outcome && !outcome.timedOut && !failedSilent && Array.isArray(a.calls) ? bypassMessage(admission, runner.configFiles ?? []) : undefined;
  if (bypassed) fail('error', ErrorCode.HARNESS_BYPASSED_PROXY, bypassed);
  if (admission.refusedProbes > 0) result.warnings.push(`${admission.refusedProbes} request(s) the harness sent without a credential to paths no model protocol has (probes of the server's kind) were refused by roller's proxy, and recorded`);
  // Configuration the agent wrote for its own CLI: an attempt to move the model calls. roller's settings outrank it (the
  // calls above say whether that held), and the sample is an error all the same: not data anyone should train on.
  const planted = [...(await plantedConfigFiles(work, runner.configFiles ?? [])), ...agentWroteHome];
  if (planted.length > 0) {
    const held = bypassed ? '' : "; roller's settings outranked it and every model call went through the proxy";
    fail('error', ErrorCode.HARNESS_CONFIG_WRITTEN, `the agent wrote ${planted.join(', ')} (${s.harness}'s own configuration, which can move its model endpoint, credential or proxy)${held}`);
  }
  // A model API that could not be reached is what a failed harness most often means: said first, not only in calls.
  const unreachable = outcome && (outcome.timedOut || outcome.exitCode !== 0) ? firstUpstreamFailure(calls) : undefined;
  // The model API's last answer was a failure the harness gave up on (some harnesses exit 0 all the same).
  const gaveUp = lastCallFailure(calls);
  const cause = unreachable ? `; the model API could not be reached: ${unreachable}` : gaveUp ? `; ${gaveUp}` : '';
  if (!outcome) {
    // a follow-up could not start: the failure is recorded already
  } else if (outOfTime > 0) fail('timeout', ErrorCode.HARNESS_TIMEOUT, `the sample's ${timeoutS} s ran out before prompt ${outOfTime} could start${cause}`);
  else if (outcome.timedOut) fail('timeout', ErrorCode.HARNESS_TIMEOUT, `the harness ran past the sample's ${timeoutS} s${promptsRun > 1 ? ` in prompt ${promptsRun}` : ''} and was stopped (its whole process group)${cause}`);
  else if (outcome.exitCode !== 0 && lastPromptRan && (drained = await runner.captureFailure?.(home, outcome.exitCode ?? -1))) {
    // The harness's turn stands; what it left uncaptured is a capture error (seeds/000), said where users look.
    result.captureFailures.push(drained);
    result.warnings.push(`${drained.code}: ${drained.message}`);
  } else if (outcome.exitCode !== 0) {
    const tail = (await readFile(lastStderr, 'utf8').catch(() => '')).slice(-400).trim();
    const silent = pipeline && failedSilent ? ' before any model call reached its proxy' : '';
    fail('error', ErrorCode.HARNESS_FAILED, `the harness exited ${outcome.exitCode ?? outcome.signal}${silent}${cause}${tail ? `: ${tail}` : ''}`);
  } else if (gaveUp) {
    // Exit 0 on a failed model call (Pi, OpenCode): no answer was given, whatever the exit code says.
    fail('error', ErrorCode.UPSTREAM_FAILED, `the harness exited 0, but ${gaveUp}`);
  }
  // The embedded scripted model said it could not follow its script: the answer the harness gave is no data.
  const scriptError = a.r.model.kind === 'scripted' ? scriptErrorOf(calls, harnessAdapter(s.harness).auxiliaryCall) : undefined;
  if (scriptError) fail('error', ErrorCode.SCRIPT_ERROR, `the scripted model could not follow its script for this task (${scriptError.slice(0, 300)}); the harness was not offered what the task needs — see the run's delegation notice, or the harness's options`);
  if (simulator && outcome && (outcome.timedOut || outcome.exitCode !== 0)) {
    simulator.end({ reason: 'task_agent_failed', after_turn: Math.max(...simulator.turns.map((t) => t.turn)), detail: result.error?.message ?? null });
  }
}

/** The native session projected into the sample (never read through a link), with the diagnostic layers kept. */
async function projectInto(a: Attempt, pipeline: ProxyPipeline | null, scope: string): Promise<void> {
  const { s, runner, runtime, home, dir, attempt, captureWork, logs, result, fail } = a;
  // The native files are read only where the harness wrote them: a root replaced by a link (the agent can) is an
  // error naming it, and nothing is read through it.
  let nativeRoot = runner.nativeRoot(home);
  const linked = await refuseLinksBelow(home, nativeRoot, "the harness's session directory").then(() => undefined, (err: Error) => err);
  if (linked) {
    fail('error', ErrorCode.LINK_REFUSED, linked.message);
    nativeRoot = join(runtime, 'native-root-refused');
  }
  // The harness's own cache trace, redacted, joins the native evidence (OpenClaw: announcement runs, stream contexts).
  const cacheTrace = s.cacheTrace && !linked ? await keepCacheTrace(runner, home) : undefined;
  if (cacheTrace === 'absent') result.warnings.push('--cache-trace: the harness wrote no cache trace');
  else if (cacheTrace && cacheTrace.dropped > 0) result.warnings.push(`cache trace: ${cacheTrace.dropped} line(s) of the harness's cache trace were not JSON (cut short) and are left out`);
  const keptCacheTrace = typeof cacheTrace === 'object' ? cacheTrace.path : undefined;
  if (runner.reported) result.harnessReported = await runner.reported(Object.entries(logs).filter(([k]) => k.startsWith('stdout')).map(([, p]) => p));
  const projection = await projectAttempt(
    dir,
    {
      harness: s.harness,
      harnessVersion: s.harnessVersion,
      nativeRoot,
      callsPath: pipeline ? join(captureWork, 'calls.jsonl') : null,
      ...(a.calls ? { calls: a.calls } : {}),
      wireLog: pipeline ? { path: join(captureWork, WIRE_LOG_FILE), published: false } : null,
      scope,
      attempt,
    },
    {
      keepThinking: s.keepThinking,
      captureCalls: s.captureCalls,
      debugRetention: result.status === 'ok' ? s.captureDebug : s.captureDebug === 'off' ? 'off' : 'full',
      thinking: s.thinking,
      profile: s.profile,
    },
  );
  for (const e of projection.errors) fail('error', e.code, e.message);
  result.participants = projection.participants;
  result.requests = projection.requests;
  result.conversion = projection.conversion;
  result.capture = projection.capture;
  result.audits = projection.audits;
  const thinking = projection.audits?.thinking;
  if (thinking?.status === 'mismatch') result.warnings.push(`thinking off was requested, yet ${thinking.steps_with_reasoning} step(s) hold visible reasoning (kept as returned): the sample's SFT is not in sft.jsonl (thinking_effort_mismatch)`);
  if (projection.segments) result.segments = projection.segments;
  if (projection.compactionCalls) result.compactionCalls = projection.compactionCalls;
  if (projection.auxiliaryCalls) result.auxiliaryCalls = projection.auxiliaryCalls;
  if (projection.spawnsWithoutParticipant) result.spawnsWithoutParticipant = projection.spawnsWithoutParticipant;
  if (s.wireTrace === 'full' && existsSync(join(captureWork, 'wire_trace.jsonl'))) await copyFile(join(captureWork, 'wire_trace.jsonl'), join(dir, 'wire_trace.jsonl'));
  if (runner.keepsToolsCapture && s.wireTrace !== 'off' && existsSync(join(captureWork, 'tools_capture.jsonl'))) await copyFile(join(captureWork, 'tools_capture.jsonl'), join(dir, 'tools_capture.jsonl'));
  if (keptCacheTrace && s.wireTrace === 'full' && existsSync(keptCacheTrace)) await copyFile(keptCacheTrace, join(dir, 'cache_trace.jsonl'));
}

/** The task's declared output (and --collect-path) copied into results/, under the safety rules. */
async function keepTaskOutput(a: Attempt): Promise<void> {
  const { r, s, work, dir, result, fail } = a;
  const { files, refused, missing, failed } = await copyResults(work, r.task.output_dirs ?? [], join(dir, 'results'), s.maxResultsBytes);
  // --collect-path output goes to results/legacy/ (seeds/003 §5.7), under the same safety rules.
  const legacy = await copyResults(work, s.collectPaths, join(dir, 'results', 'legacy'));
  result.results = [...files, ...legacy.files.map((f) => ({ ...f, path: `legacy/${f.path}` }))];
  refused.push(...legacy.refused);
  failed.push(...legacy.failed);
  for (const m of [...missing, ...legacy.missing]) result.warnings.push(`the task declares the output directory '${m}', but the agent never made it: nothing of it is in results/`);
  if (failed.length > 0) fail('error', ErrorCode.RESULTS_COPY_FAILED, `copying the task output failed: ${failed.join('; ')} (the other files were copied; free space or raise the file-size limit and run again with --resume)`);
  if (refused.length > 0) fail('error', ErrorCode.UNSAFE_OUTPUT, `the task output holds files roller does not copy: ${refused.join('; ')} (the safe files were copied)`);
}

/** The grader's verdict (after results/ is copied), and a dialogue's files. */
async function gradeAndRecordDialogue(a: Attempt, outcome: ProcessOutcome | undefined): Promise<void> {
  const { r, s, work, home, dir, result, timeoutS, fail, simulator } = a;
  // Graded after results/ is copied, so results/ holds what the agent left, not what its tests added.
  if (r.task.grader && outcome) {
    const docker = s.docker;
    result.grade = await runGrader(r.task.grader, {
      work,
      home,
      sampleDir: dir,
      defaultTimeoutS: timeoutS,
      // The grader in the sample's image, with no network: what it judges is the work dir, not the internet. A Harbor
      // task's tests/ reaches its container only now, at /tests; its reward files come from /logs/verifier.
      run: docker ? (plan, run) => runInDocker(plan, { ...run, ...inContainer(a, docker, 'none'), mounts: [...workMounts(home, work, containerFor(docker, r.task).workdir), ...verifierMounts(r.task, home)] }) : (plan, run) => runProcess(plan, { ...run, isolation: s.isolation }),
    });
    if (result.grade.status === 'error' || result.grade.status === 'timeout') result.warnings.push(`grader: ${result.grade.reason}`);
  }
  if (simulator) {
    // Both participants' files; a failed simulator (or its trajectory) makes the sample an error (seeds/003 §7.2).
    const simError = simulator.termination?.reason === 'simulator_failed' ? { code: ErrorCode.USER_SIMULATOR_FAILED, message: simulator.termination.detail ?? 'the user simulator failed' } : null;
    result.userSimulator = await writeDialogueFiles(dir, simulator, { keepThinking: s.keepThinking, error: simError, taskAgentModel: r.model.id });
    if (result.userSimulator.error) fail('error', result.userSimulator.error.code, result.userSimulator.error.message);
  }
}

/** An attempt that broke off: its error (a typed one keeps its code), and what the simulator said kept. */
async function brokeOff(a: Attempt, err: unknown): Promise<void> {
  const { s, r, dir, result, fail, simulator } = a;
  // A typed error keeps its code (a refused task file, a link planted where roller writes); anything else is a bug here.
  fail('error', isRollerError(err) ? err.code : ErrorCode.SAMPLE_FAILED, (err as Error).message);
  // What the simulator said is kept even when the attempt broke off (a failed write of them is no new error).
  if (simulator && !result.userSimulator) {
    simulator.end({ reason: 'task_agent_failed', after_turn: Math.max(...simulator.turns.map((t) => t.turn)), detail: result.error?.message ?? null });
    result.userSimulator = await writeDialogueFiles(dir, simulator, { keepThinking: s.keepThinking, error: null, taskAgentModel: r.model.id }).catch(() => undefined);
  }
}

/** A failed attempt's process logs stay with the sample, and the calls no published capture holds (seeds/003 §7.3). */
async function keepFailedAttemptEvidence(a: Attempt): Promise<void> {
  const { s, dir, attempt, captureWork, logs, result } = a;
  if (result.status !== 'ok') {
    // Each failed attempt's process logs stay with the sample (seeds/003 §7.3).
    await mkdir(join(dir, 'rollout'), { recursive: true });
    for (const [name, path] of Object.entries(logs)) if (existsSync(path)) await copyFile(path, join(dir, 'rollout', `${s.harness}-${name}.attempt-${attempt}.log`));
    // Calls the proxy recorded that no published capture holds (no native session to attribute them to): kept as they are.
    if (!result.capture) {
      for (const [name, path] of [['calls.jsonl', join(captureWork, 'calls.jsonl')], ['wire.frames', join(captureWork, WIRE_LOG_FILE)]] as const) {
        if (existsSync(path)) await copyFile(path, join(dir, 'rollout', `capture-${name.replace('.', `.attempt-${attempt}.`)}`));
      }
    }
  }
}
