import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, isRollerError } from '../core/errors.js';
import { deliveryOf, harnessAdapter, proxyHeaders, verifyOf } from '../harnesses/index.js';
import type { ParticipantUsage } from '../schemas/participant-usage.js';
import { installHarness } from '../harnesses/installer.js';
import type { Call } from '../schemas/call.js';
import { SftRecord } from '../schemas/sft.js';
import { checkValue } from '../schemas/validate.js';
import { runProcess } from '../sources/process-runner.js';
import { startScriptedModel } from '../sources/scripted-model/server.js';
import { deriveRelations, tokenDisagreements } from '../transforms/capture/index.js';
import { validateCapture } from './capture/validate.js';
import { attributionOf } from './attribution.js';
import { finalizeNativeCapture } from './capture/finalize.js';
import { convertNative } from './convert.js';
import { startProxyPipeline } from './proxy.js';
import { keepCacheTrace } from './collect/cache-trace.js';
import type { Scenario, ScenarioResult } from '../harnesses/verify-scenario.js';
import { newStandIn } from './collect/custody.js';
import type { ApiProtocol } from '../schemas/api-protocol.js';

/** An API model the scenarios run against instead of the embedded scripted model (roller verify --model). */
export interface VerifyModel {
  upstream: string;
  clientBasePath?: string;
  headers?: Readonly<Record<string, string>>;
  /** Held by the proxy only; the harness gets a stand-in. */
  key: string;
  name: string;
  protocol: ApiProtocol;
}

export type { Scenario, ScenarioResult, ScenarioStatus } from '../harnesses/verify-scenario.js';

/** How long one scenario's CLI may run (OpenClaw waits for its sub-agents to settle). */
const VERIFY_TIMEOUT_S = 240;

type Json = Record<string, any>;

/** What every runnable scenario must show (seeds/000), as a list of failures (empty: pass). */
async function check(harness: string, scenario: Scenario, calls: Call[], out: string, attempt: string, session: { sessionId: string; participants: ParticipantUsage[] }, nativeRoot: string, version: string): Promise<string[]> {
  const { participants } = session;
  const fails: string[] = [];
  // Model calls: not a prewarm (generate: false), not a request on no model protocol's path (a probe of the server).
  const model = calls.filter((c) => (c.context as Json | null)?.generate !== false && c.protocol !== 'other');
  // The capture contract the harness's adapter gives a collect sample, at the version run.
  const adapter = harnessAdapter(harness);
  const { native, attribute } = await attributionOf(adapter, { nativeRoot, version, session, tracePath: join(out, 'trace.jsonl'), profile: scenario.profile ?? null });
  const attributed = model.map(attribute);
  const bad = attributed.filter((c) => c.identity_status !== 'attributed');
  if (bad.length > 0) fails.push(`${bad.length} calls not attributed (${bad.map((c) => c.status_reasons.identity_status).join('; ')})`);
  const children = participants.filter((p) => p.role === 'child');
  if (children.length !== scenario.agents) fails.push(`${children.length} sub-agents, expected ${scenario.agents}`);
  // The tree: every child hangs off a participant, one level below it.
  for (const c of children) {
    const parent = participants.find((p) => p.participant === c.parent);
    if (!parent) fails.push(`${c.participant} has no parent participant (${c.reason ?? 'unknown'})`);
    else if (c.depth !== parent.depth + 1) fails.push(`${c.participant} is at depth ${c.depth} under ${parent.participant} at depth ${parent.depth}`);
  }
  if (scenario.depth !== undefined && Math.max(0, ...children.map((c) => c.depth)) !== scenario.depth) fails.push(`deepest sub-agent at depth ${Math.max(0, ...children.map((c) => c.depth))}, expected ${scenario.depth}`);
  // Tokens are compared over the calls that can leave a native record (OpenCode's title requests write none).
  const counted = native.outputs.method === 'count' ? native.outputs.counted : undefined;
  fails.push(...tokenDisagreements(counted ? attributed.filter((c) => counted.test(c)) : attributed, participants));
  for (const p of participants) if (p.role === 'child' && p.status !== 'completed') fails.push(`${p.participant} is ${p.status}`);
  const relations = deriveRelations({ calls: attributed, participants, ...(native.agentPaths ? { agentPaths: native.agentPaths } : {}), ...(native.announcements ? { announcements: native.announcements } : {}), ...deliveryOf(harness) });
  const count = (t: string) => relations.filter((r) => r.type === t && r.status === 'established').length;
  const unbound = scenario.unboundSpawns ?? 0;
  const bound = (scenario.agents ?? 0) - unbound;
  if (count('spawn') !== bound) fails.push(`${count('spawn')} established spawn relations, expected ${bound}`);
  if (count('child_completed') !== bound) fails.push(`${count('child_completed')} child_completed, expected ${bound}`);
  if (count('result_delivered') !== bound) fails.push(`${count('result_delivered')} result_delivered, expected ${bound}`);
  const unknownSpawns = relations.filter((r) => r.type === 'spawn' && r.status === 'unknown' && r.reason);
  if (unknownSpawns.length !== unbound) fails.push(`${unknownSpawns.length} spawn relations unknown with a reason, expected ${unbound}`);
  if (scenario.background && count('launch_acknowledged') !== scenario.agents) fails.push('no launch_acknowledged for the background sub-agent');
  if (scenario.distinctTools) {
    // What each sub-agent was actually offered (its captured requests), never the parent's list copied over.
    const toolsOf = (p: ParticipantUsage) =>
      JSON.stringify([...new Set(attributed.filter((c) => c.participant_id === p.participant).flatMap((c) => (((c.context as Json | null)?.tools ?? []) as Json[]).map((t) => String(t.name ?? t.function?.name ?? t.type))))].sort());
    const sets = new Set(children.map(toolsOf));
    if (sets.size !== children.length) fails.push(`the sub-agents were offered the same tools (${[...sets].join(' | ')})`);
  }
  const manifest = await finalizeNativeCapture(native, { dir: attempt, calls: attributed, attempt: 1, scope: 'verify', debugRetention: 'on-error' });
  // Spawns the native files cannot bind leave the capture partial: that is the honest result, and what is checked.
  if (unbound === 0 && manifest.capture_status !== 'complete') fails.push(`capture ${manifest.capture_status} (lifecycle ${manifest.lifecycle?.status}, coverage ${manifest.coverage?.status})`);
  if (unbound > 0 && (manifest.capture_status !== 'partial' || manifest.lifecycle?.status !== 'unknown')) fails.push(`capture ${manifest.capture_status} (lifecycle ${manifest.lifecycle?.status}) although ${unbound} spawns are unknown: expected partial, unknown`);
  if (manifest.coverage?.status !== 'verified') fails.push(`coverage ${manifest.coverage?.status}: ${manifest.coverage?.detail} ${manifest.coverage?.missing.join(', ')}`);
  fails.push(...(await validateCapture(attempt)).map((p) => `validate-capture: ${p}`));
  const sft = await readFile(join(out, 'trace_SFT.json'), 'utf8').catch(() => undefined);
  if (sft === undefined) {
    const conv = JSON.parse(await readFile(join(out, 'conversion.json'), 'utf8')) as Json;
    fails.push(`SFT unavailable: ${conv.trajectory_conversion.find((t: Json) => t.target === 'sft')?.reason}`);
  } else if (checkValue(SftRecord, JSON.parse(sft)).length > 0) fails.push('trace_SFT.json does not validate');
  return fails;
}

/** What one scenario's run left, for a recorder (the version matrix's fixtures): kept before anything is judged. */
export interface ScenarioRun {
  harness: string;
  version: string;
  scenario: string;
  /** The converter root under the run's HOME. */
  nativeRoot: string;
  /** The proxy's calls.jsonl. */
  callsPath: string;
}

async function runScenario(
  harness: string,
  { bin, version, runtime }: { bin: string; version: string; runtime?: string },
  scenario: Scenario,
  root: string,
  modelUrl: string,
  record?: (run: ScenarioRun, fails: readonly string[]) => Promise<void>,
  api?: VerifyModel,
): Promise<string[]> {
  const base = join(root, scenario.name.replace(/\W+/g, '-'));
  const home = join(base, 'home');
  const work = join(base, 'work');
  await mkdir(work, { recursive: true });
  await writeFile(join(work, 'notes.txt'), 'The secret word is BLUEBIRD.\nSecond line of notes.\n');
  for (const [rel, text] of Object.entries(scenario.files ?? {})) {
    await mkdir(join(work, rel, '..'), { recursive: true });
    await writeFile(join(work, rel), text);
  }
  const standIn = newStandIn();
  const { proxy, done } = await startProxyPipeline({
    upstream: api?.upstream ?? modelUrl,
    ...(api ? { credential: { standIn, key: api.key }, ...(api.clientBasePath ? { clientBasePath: api.clientBasePath } : {}), ...(api.headers ? { upstreamHeaders: api.headers } : {}) } : {}),
    outDir: join(base, 'capture'),
    wireTrace: 'off',
    ...proxyHeaders(harness),
  });
  const runner = harnessAdapter(harness).runner!;
  const plan = await runner.plan({
    bin,
    version,
    prompt: scenario.prompt!,
    home,
    work,
    baseUrl: proxy.url,
    apiKey: api ? standIn : 'roller-verify-key-3b8e1f0c9a7d2e6b5f41',
    ...(api ? { model: api.name, protocol: api.protocol } : {}),
    captureCalls: true, // verify records every call
    ...(scenario.extraArgs ? { extraArgs: scenario.extraArgs } : {}),
    ...(scenario.profile ? { profile: scenario.profile } : {}),
    ...(scenario.harnessOptions ? { harnessOptions: api ? onModel(scenario.harnessOptions, api.name) : scenario.harnessOptions } : {}),
    // OpenClaw: its Node runtime, and its cache trace (the seeds' default there: announcement runs, stream contexts).
    ...(runtime ? { runtime } : {}),
    ...(runner.cacheTraceFile ? { cacheTrace: true } : {}),
    timeoutS: VERIFY_TIMEOUT_S,
  });
  const outcome = await runProcess(plan, { timeoutMs: VERIFY_TIMEOUT_S * 1000, stdoutPath: join(base, 'stdout.jsonl'), stderrPath: join(base, 'stderr.txt') });
  await proxy.close();
  await done;
  if (outcome.exitCode !== 0) {
    const drained = outcome.timedOut ? null : await runner.captureFailure?.(home, outcome.exitCode ?? -1);
    if (drained) return [`${drained.code}: ${drained.message}`];
    return [`the CLI exited ${outcome.exitCode}${outcome.timedOut ? ' (timeout)' : ''}: ${(await readFile(join(base, 'stderr.txt'), 'utf8')).slice(-300)}`];
  }
  await keepCacheTrace(runner, home);
  const calls = (await readFile(join(base, 'capture', 'calls.jsonl'), 'utf8')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
  const judged = await (async () => {
    const out = join(base, 'converted');
    const [session] = await convertNative({ harness, native: runner.nativeRoot(home), out, keepThinking: true, wire: join(base, 'capture', 'calls.jsonl') });
    if (!session) return ['no native session was written'];
    return check(harness, scenario, calls, out, join(base, 'capture', 'attempt-0001'), session, runner.nativeRoot(home), version);
  })().catch((err: unknown) => [`error: ${(err as Error).message}`]);
  await record?.({ harness, version, scenario: scenario.name, nativeRoot: runner.nativeRoot(home), callsPath: join(base, 'capture', 'calls.jsonl') }, judged);
  return judged;
}

/**
 * A scenario's agent roles on the API model: a role that names a model of the scripted model's own (Codex's read-only
 * `scripted-reader`) is given the API's, which is the one model the run may call.
 */
function onModel(options: Record<string, unknown>, model: string): Record<string, unknown> {
  const roles = options.roles as Record<string, { description: string; config: string }> | undefined;
  if (!roles) return options;
  const toml = JSON.stringify(model); // a TOML basic string is JSON-compatible for a model id
  return { ...options, roles: Object.fromEntries(Object.entries(roles).map(([name, r]) => [name, { ...r, config: r.config.replace(/^model = .*$/m, `model = ${toml}`) }])) };
}

/**
 * `roller verify`: install the pinned harness, run the common acceptance scenarios on the scripted model
 * through the recording proxy (offline), and judge each from the files: attribution, sub-agents, tokens,
 * relations, the published capture, SFT. Nothing counts as passed that did not run.
 */
export async function verifyHarness(
  harness: string,
  options: {
    cacheDir?: string;
    version?: string;
    scenarios?: readonly string[];
    keep?: boolean;
    onResult?: (r: ScenarioResult) => void;
    /** What a slow step is doing (installing the CLI). */
    onProgress?: (message: string) => void;
    /** Called with each scenario whose CLI run finished (the version matrix records its fixture). */
    record?: (run: ScenarioRun, fails: readonly string[]) => Promise<void>;
    /** An API model to run the scenarios on (absent: the embedded scripted model). */
    model?: VerifyModel;
  } = {},
): Promise<ScenarioResult[]> {
  const { scenarios } = verifyOf(harness);
  const installed = await installHarness(harness, { ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}), ...(options.version ? { version: options.version } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  const root = await mkdtemp(join(tmpdir(), `roller-verify-${harness}-`));
  const model = await startScriptedModel();
  const results: ScenarioResult[] = [];
  try {
    for (const scenario of scenarios.filter((sc) => !options.scenarios || options.scenarios.includes(sc.name))) {
      const started = Date.now();
      let result: ScenarioResult;
      if (scenario.skip) result = { scenario: scenario.name, status: scenario.skip.status, reason: scenario.skip.reason, seconds: 0 };
      else {
        let absent: string | null = null;
        const fails = await runScenario(harness, installed, scenario, root, model.url, options.record, options.model).catch((err: unknown) => {
          // The release has not what the scenario needs (its launch plan says so): not applicable, not a failure.
          if (isRollerError(err, ErrorCode.HARNESS_FEATURE_ABSENT)) absent = err.message;
          return [`error: ${(err as Error).message}`];
        });
        const seconds = (Date.now() - started) / 1000;
        result = absent !== null ? { scenario: scenario.name, status: 'not_applicable', reason: absent, seconds } : { scenario: scenario.name, status: fails.length === 0 ? 'pass' : 'fail', reason: fails.join('; '), seconds };
      }
      results.push(result);
      options.onResult?.(result);
    }
  } finally {
    await model.close();
    if (!options.keep) await rm(root, { recursive: true, force: true });
  }
  return results;
}
