import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import { defaultCacheDir } from '../harnesses/cache-dir.js';
import type { ProfileOption } from '../harnesses/profiles.js';
import type { RunInfo } from '../schemas/run-info.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';
import { captureDebugOption, nonNegativeInt, positiveInt, sinkSpecsOf, wireTraceOption, withSinkOptions, timerSeconds } from './options.js';
import { parseDockerUser, parseMemory, type DockerRequest } from '../pipelines/collect/docker-plan.js';
import type { ContainerLimits } from '../sources/docker-runner.js';
import { printLine } from './output.js';
import { parseShard } from '../pipelines/scale/shard.js';
import { parseQueueUrl, queueSecret, refusePasswordlessRedis } from '../pipelines/scale/queue-jobs.js';
import { rollerVersion } from '../core/version.js';

/** What commander hands the collect action (the options below, by their camelCase names). */
interface CollectCliOptions {
  tasks: string;
  harness: string;
  model?: string[];
  modelConfig?: string;
  output: string;
  runName?: string;
  concurrency: number;
  retries: number;
  resume?: boolean;
  timeout: number;
  wireTrace: WireTraceMode;
  keepThinking: boolean;
  thinking?: string;
  captureCalls?: boolean;
  claudeCaptureCalls?: boolean;
  captureDebug: 'on-error' | 'full' | 'off';
  runner: string;
  image?: string;
  dockerUser?: string;
  memory?: string;
  cpus?: number;
  pidsLimit?: number;
  dockerNetwork: string;
  cacheDir: string;
  json?: boolean;
  cacheTrace?: boolean;
  collectPath?: string[];
  maxResultsMb?: number;
  keyInHarness?: boolean;
  agentMayReadKey?: boolean;
  /** The harnesses' profile options (declared by their adapters), by attribute name. */
  [profileOption: string]: unknown;
  harnessVersion?: string;
  allowUnverifiedVersion?: boolean;
  sink?: string[];
  sinkOption?: string[];
  sinkOptions?: string;
  sinkTimeout?: number;
  shard?: string;
  queue?: string;
  queueName: string;
  redisNoPassword?: boolean;
}

function positiveNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a number above 0');
  return n;
}

/** --image (absent: Harbor tasks bring their own) and the container's user and limits, as the library takes them. */
function dockerRequest(opts: CollectCliOptions): DockerRequest {
  const limits: Partial<ContainerLimits> = {
    ...(opts.memory ? { memoryBytes: parseMemory(opts.memory, '--memory') } : {}),
    ...(opts.cpus ? { nanoCpus: Math.round(opts.cpus * 1e9) } : {}),
    ...(opts.pidsLimit ? { pids: opts.pidsLimit } : {}),
  };
  if (opts.dockerNetwork !== 'host' && opts.dockerNetwork !== 'proxy') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--docker-network ${opts.dockerNetwork}: host or proxy`);
  return { ...(opts.image ? { image: opts.image } : {}), limits, network: opts.dockerNetwork, ...(opts.dockerUser ? { user: parseDockerUser(opts.dockerUser) } : {}) };
}

/** `roller collect`: tasks x models through a harness, each sample recorded. */
export function registerCollectCommand(program: Command): void {
  let profileOpts: ProfileOption[] = [];
  const command = program
    .command('collect')
    .description('run every task x model through a harness on the embedded scripted model (or an API), recording every call; writes a run directory (seeds/003)')
    .requiredOption('--tasks <file>', 'tasks JSONL: one {"id","prompt", "followups"?, "files"?, "output_dirs"?, "timeout_s"?, "user_simulator"?, "grader"?} per line (followups: later prompts in the same session, for a harness whose CLI names its session)')
    .option('--harness <name>', 'the harness CLI to run (roller harness list names those roller can run)', 'claude-code')
    .option('--model <provider/model>', 'repeatable; scripted/<name> starts the embedded scripted model', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--model-config <file>', 'JSON {"models": {"provider/model": {"api_base", "api_key_env", "model"?, "protocol"?, "headers"?}}} (examples/models/); keys only from the environment')
    .option('--output <dir>', 'parent directory of runs', 'runs')
    .option('--run-name <name>', 'the run directory under --output (default: harness and time)')
    .option('--concurrency <n>', 'samples at once', positiveInt, 1)
    .option('--retries <n>', 'extra complete attempts of a failed sample', nonNegativeInt, 0)
    .option('--resume', 'continue the run in --run-name: reuse finished samples, run the rest (the lock must match)')
    .option('--timeout <s>', 'per-sample timeout in seconds, all its prompts together (a task timeout_s wins)', timerSeconds, 600)
    .option('--wire-trace <mode>', 'off | actf | full (seeds/003 §5.5)', wireTraceOption, 'actf')
    .option('--no-keep-thinking', 'empty reasoning in SFT')
    .option('--thinking <level>', 'reasoning level for the harness (claude-code --effort: low..max; codex model_reasoning_effort, pi and openclaw --thinking, opencode --variant: minimal..xhigh), audited on the wire')
    .option('--capture-calls', 'record every model call and publish capture/ (calls, relations, manifest) per sample; needs the wire trace (seeds/000: off by default)')
    .option('--claude-capture-calls', 'alias of --capture-calls')
    .option('--no-capture-calls', 'the default: no capture/ (kept for scripts that say so)')
    .option('--cache-trace', "OpenClaw's own cache trace (on by default for OpenClaw; kept in the sample, redacted, with --wire-trace full; an error for other harnesses)")
    .option('--no-cache-trace', "OpenClaw: do not ask for its cache trace")
    .option('--agent-may-read-key', "where this machine gives the agent no process isolation (no namespaces): run a keyed model anyway, though every tool the agent runs can read roller's environment and the key in it (refused without this)")
    .option('--key-in-harness', "with --wire-trace off (no proxy): give a model's key to the harness itself, where every tool the agent runs can read it (refused without this)")
    .option('--max-results-mb <n>', "one sample's results/ at most this many MiB in all (default 1024); a file past it is refused and named", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a whole number of MiB above 0');
      return n;
    })
    .option('--collect-path <path>', 'repeatable; a work-dir path also copied to results/legacy/', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--capture-debug <mode>', 'on-error | full | off: when capture/ keeps raw/', captureDebugOption, 'on-error')
    .option('--runner <kind>', 'local (default) | docker', 'local')
    .option('--image <name>', '--runner docker: the image samples run in, never pulled (scripts/docker-engine.sh base-image builds one; host networking; the pinned CLI is mounted)')
    .option('--docker-user <uid[:gid]>', '--runner docker: the user samples run as (default: yours; as root, 1000:1000); never 0')
    .option('--memory <size>', '--runner docker: memory per container, e.g. 2g or 512m (no swap beyond it)')
    .option('--cpus <n>', '--runner docker: CPUs per container, e.g. 1.5', positiveNumber)
    .option('--docker-network <mode>', "--runner docker: host (the host's network: every loopback service is reachable) | proxy (no network but the sample's recording proxy)", 'host')
    .option('--pids-limit <n>', '--runner docker: processes and threads per container (default 4096)', positiveInt)
    .option('--cache-dir <dir>', 'where pinned harness CLIs are installed', defaultCacheDir())
    .option('--harness-version <version>', 'run this released version of the harness CLI instead of the pinned one (roller harness versions NAME lists the verified ones); the lock records it')
    .option('--allow-unverified-version', 'run a --harness-version that is not in the version matrix')
    .option('--shard <I/N|env>', "run only shard I of N (the requests whose index ≡ I mod N, counted from 0) into <run-name>.shard-I-of-N; env: from ROLLER_SHARD, a Slurm array or a Kubernetes Indexed Job; roller merge joins the shards")
    .option('--queue <redis-url>', 'do not run samples here: queue each as a BullMQ job in this Redis (redis://HOST:PORT[/DB]) for roller worker processes that see --output at the same path; waits for them and finishes the run')
    .option('--queue-name <name>', 'the BullMQ queue (--queue)', 'roller')
    .option('--redis-no-password', 'with --queue: accept a Redis without a password (anyone who reaches it could read and write the queue; refused without this)')
    .option('--json', 'print the final run info as JSON on stdout');
  // The harnesses' own options (their profiles) come from the registry, loaded only when collect runs.
  program.hook('preSubcommand', async (_program, sub) => {
    if (sub === command) profileOpts = await addProfileOptions(command);
  });
  withSinkOptions(command)
    .action(async (opts: CollectCliOptions) => {
      if (opts.runner !== 'local' && opts.runner !== 'docker') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--runner ${opts.runner}: local or docker`);
      const harnessProfile = await profileOfOptions(profileOpts, opts);
      const controller = new AbortController();
      const onSignal = () => {
        if (controller.signal.aborted) {
          // A second Ctrl-C: leave now (info.json holds the last checkpoint); containers do not outlive roller.
          void import('../sources/docker-runner.js').then((d) => d.removeRunningContainers()).finally(() => process.exit(130));
          return;
        }
        process.stderr.write('roller collect: interrupted; queued samples are cancelled, running ones finish (Ctrl-C again to leave at once)\n');
        controller.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const progress = new (await import('./collect-progress.js')).CollectProgress();
      let total = 0;
      const { runDir, info } = await (await import('../pipelines/collect/run.js')).collect({
        onPlan: (n) => (total = n),
        tasks: opts.tasks,
        harness: opts.harness,
        models: opts.model ?? ['scripted/default'],
        ...(opts.model ? {} : { modelsDefaulted: true }),
        ...(opts.modelConfig ? { modelConfig: opts.modelConfig } : {}),
        output: opts.output,
        ...(opts.runName ? { runName: opts.runName } : {}),
        ...(opts.shard ? { shard: parseShard(opts.shard) } : {}),
        ...(opts.queue ? { queue: { url: checkedQueueUrl(opts.queue, opts.redisNoPassword === true), name: opts.queueName } } : {}),
        concurrency: opts.concurrency,
        retries: opts.retries,
        resume: opts.resume ?? false,
        timeoutS: opts.timeout,
        wireTrace: opts.wireTrace,
        keepThinking: opts.keepThinking,
        thinking: opts.thinking ?? null,
        captureCalls: opts.captureCalls === true || opts.claudeCaptureCalls === true,
        captureDebug: opts.captureDebug,
        ...(opts.cacheTrace !== undefined ? { cacheTrace: opts.cacheTrace } : {}),
        ...(harnessProfile ? { harnessProfile } : {}),
        ...(opts.collectPath ? { collectPaths: opts.collectPath } : {}),
        ...(opts.keyInHarness ? { keyInHarness: true } : {}),
        ...(opts.agentMayReadKey ? { agentMayReadKey: true } : {}),
        ...(opts.maxResultsMb ? { maxResultsBytes: opts.maxResultsMb * (1 << 20) } : {}),
        runner: opts.runner,
        ...(opts.runner === 'docker' ? { docker: dockerRequest(opts) } : {}),
        cacheDir: opts.cacheDir,
        ...(opts.harnessVersion ? { harnessVersion: opts.harnessVersion } : {}),
        ...(opts.allowUnverifiedVersion ? { allowUnverifiedVersion: true } : {}),
        sinkSpecs: await sinkSpecsOf(opts),
        ...(opts.sinkTimeout ? { sinkTimeoutS: opts.sinkTimeout } : {}),
        signal: controller.signal,
        rollerVersion: rollerVersion,
        onStart: (r) => progress.started(r, total),
        onSample: (s, p) => progress.finished(s, p),
        onNotice: (message) => process.stderr.write(`roller collect: ${message}\n`),
        onNotReused: (dir, why) => process.stderr.write(`roller collect --resume: ${dir} is collected again, its capture fails validation: ${why}\n`),
      });
      progress.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await reportRun(runDir, info);
      if (opts.json) await printLine(JSON.stringify(info));
      else await printLine(runDir);
      process.exitCode = info.state === 'finished' && info.summary.failed === 0 ? 0 : 1;
      for (const e of info.errors) process.stderr.write(`roller collect: ${e.message}\n`);
      if (info.errors.length > 0) process.exitCode = 1;
    });
}

/** The run's end on stderr: the tally, what was kept out of sft.jsonl and why (info.json summary.training's policy). */
async function reportRun(runDir: string, info: RunInfo): Promise<void> {
  const say = (line: string) => process.stderr.write(`roller collect: ${line}\n`);
  const sft = (await readFile(join(runDir, 'sft.jsonl'), 'utf8')).split('\n').filter(Boolean).length;
  const { ok, error, timeout, skipped } = info.summary;
  const segmented = info.summary.sft_segmented ?? 0;
  const excluded = info.progress.total - sft - segmented;
  const compacted = segmented > 0 ? `; ${segmented} compacted, their segments in sft_segments.jsonl` : '';
  say(`${info.state}: ${ok} ok, ${skipped} reused, ${error} error, ${timeout} timeout; sft.jsonl holds ${sft} of ${info.progress.total} samples (${excluded} excluded: failed, not run, or no eligible SFT${compacted})`);
  if (info.delegation) say(`${String(info.config.harness)} ran without its delegation tool: ${info.delegation.reason} (info.json delegation)`);
  const t = info.summary.training;
  if (t) {
    if (t.thinking_mismatch > 0) say(`${t.thinking_mismatch} samples hold visible reasoning though --thinking off asked for none: excluded from sft.jsonl (runtime.thinking_audit, thinking_effort_mismatch)`);
    if (t.wire_effort_mismatch > 0) say(`${t.wire_effort_mismatch} samples sent another reasoning effort than --thinking asked: excluded from sft.jsonl (runtime.wire_effort_audit)`);
    if (t.wire_effort_unverified > 0) say(`${t.wire_effort_unverified} samples' requests did not state the reasoning effort (unverified, not excluded)`);
    if (t.incomplete > 0) say(`${t.incomplete} samples end incomplete (token limit or empty answer): excluded from sft.jsonl (info.json runtime.completion_audit)`);
    if (t.subagents_not_completed) say(`${t.subagents_not_completed} samples have a sub-agent that did not complete (named on their lines above; info.json runtime.participants): their own status does not say it`);
    const unfinished = t.excluded.incomplete_delegation ?? 0;
    if (unfinished > 0) say(`${unfinished} samples answered without a sub-agent's result (it never finished, or was cut off): excluded from sft.jsonl (runtime.delegation_audit, incomplete_delegation)`);
    if (t.model_name_mismatch > 0) say(`${t.model_name_mismatch} samples were answered by a model of another name than requested (a warning: aliases are legitimate; runtime.model_identity_audit)`);
  }
  const g = info.summary.grades;
  if (g) {
    const ungraded = g.timeout + g.error > 0 ? `, ${g.timeout} timed out, ${g.error} could not be graded (info.json grade.reason)` : '';
    say(`graded ${g.graded}: ${g.passed} passed, ${g.failed} failed${ungraded} (a verdict on the work; it changes no sample status and no SFT inclusion)`);
  }
}

/** Adds each profile option the registered harnesses declare (`--pi-subagent-extension`, `--openclaw-mode <mode>`). */
async function addProfileOptions(command: Command): Promise<ProfileOption[]> {
  const [{ profileOptions, takesValue }, { findHarness, runnableHarnesses }] = await Promise.all([import('../harnesses/profiles.js'), import('../harnesses/index.js')]);
  const options = profileOptions(runnableHarnesses().map((name) => findHarness(name)!));
  for (const o of options) {
    const help = takesValue(o) ? o.profiles.map((p) => `${p.value} (${p.description})`).join(' | ') : o.profiles[0]!.description;
    command.addOption(new Option(takesValue(o) ? `${o.option} <value>` : o.option, `${o.harness}: ${help}`));
  }
  return options;
}

/** The profile the given profile options select, refusing one of another harness than --harness. */
async function profileOfOptions(options: readonly ProfileOption[], opts: CollectCliOptions): Promise<string | null> {
  const { profileOfValue } = await import('../harnesses/profiles.js');
  let selected: string | null = null;
  for (const o of options) {
    const value = opts[new Option(o.option).attributeName()] as string | true | undefined;
    if (value === undefined) continue;
    if (o.harness !== opts.harness) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${o.option} is an option of ${o.harness} (this run's harness is ${opts.harness})`);
    selected = profileOfValue(o, value).name ?? selected;
  }
  return selected;
}

/** `roller oracle`: a Harbor task set checked by its own solutions before a collect spends model calls on it. */
export function registerOracleCommand(program: Command): void {
  program
    .command('oracle')
    .description("run each Harbor task's solution/solve.sh in the task's image, then its verifier (no model, no network): a task its own solution does not pass is broken")
    .requiredOption('--tasks <dir>', 'a Harbor task directory, or a directory of them')
    .option('--docker-user <uid[:gid]>', 'the user the solution runs as (default: yours; as root, 1000:1000)')
    .option('--json', 'one JSON line per task on stdout')
    .action(async (opts: { tasks: string; dockerUser?: string; json?: boolean }) => {
      const { checkHarborSolutions, oracleFailures } = await import('../pipelines/harbor-oracle.js');
      const results = await checkHarborSolutions(opts.tasks, {
        docker: opts.dockerUser ? { user: parseDockerUser(opts.dockerUser) } : {},
        onNotice: (m) => process.stderr.write(`roller oracle: ${m}\n`),
        onResult: (r) => void printLine(opts.json ? JSON.stringify(r) : `${r.status.padEnd(16)} ${r.task}${r.grade ? ` reward ${JSON.stringify(r.grade.scores)}` : ''}${r.reason ? ` — ${r.reason}` : ''}`),
      });
      const failed = oracleFailures(results);
      process.stderr.write(`roller oracle: ${results.length - failed.length} of ${results.length} tasks passed by their own solution\n`);
      if (failed.length > 0) process.exitCode = 1;
    });
}

/**
 * A collect's arguments checked as `roller collect` would parse them (without running it): what a launcher (slurm, k8s)
 * passes to every shard. Its --output and --run-name; --shard and --resume are the launcher's to add.
 */
export async function checkedCollectArgs(args: readonly string[]): Promise<{ output: string; runName: string | undefined }> {
  const program = new Command('roller');
  registerCollectCommand(program);
  const command = program.commands.find((c) => c.name() === 'collect')!;
  await addProfileOptions(command);
  command.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  let parsed: { operands: string[]; unknown: string[] };
  try {
    parsed = command.parseOptions([...args]);
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the collect arguments: ${(err as Error).message.replace(/^error: /, '')}`);
  }
  const extra = [...parsed.operands, ...parsed.unknown];
  if (extra.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the collect arguments: ${extra.join(' ')} is not a collect option (roller collect --help lists them)`);
  const opts = command.opts<CollectCliOptions>();
  if (!opts.tasks) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'the collect arguments need --tasks');
  if (opts.queue) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'the collect arguments: leave out --queue; shards run their samples themselves');
  for (const own of ['shard', 'resume'] as const) if (opts[own] !== undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the collect arguments: leave out --${own}; every shard runs with --shard env --resume`);
  return { output: opts.output, runName: opts.runName };
}

/** --queue: a Redis URL with a password (or the user's acceptance of none), and the queue's shared secret set. */
function checkedQueueUrl(queue: string, noPassword: boolean): string {
  const url = parseQueueUrl(queue);
  refusePasswordlessRedis(url, noPassword);
  queueSecret();
  return url;
}
