import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { ErrorCode } from '../../core/errors.js';
import type { ParticipantUsage } from '../../harnesses/claude-code/participants.js';
import { claudeCodePlan, claudeConfigDir } from '../../harnesses/claude-code/launch.js';
import { CLAUDE_CODE_RAW_SCHEMA } from '../../harnesses/claude-code/trace.js';
import { codexPlan } from '../../harnesses/codex/launch.js';
import { opencodePlan } from '../../harnesses/opencode/launch.js';
import { openClawStateDir, openclawPlan } from '../../harnesses/openclaw/launch.js';
import { findOpenClawStore, OPENCLAW_RAW_SCHEMA, openClawNativeCapture, readOpenClawStore } from '../../harnesses/openclaw/store.js';
import { piPlan } from '../../harnesses/pi/launch.js';
import { PI_RAW_SCHEMA } from '../../harnesses/pi/session.js';
import { openCodeNativeCapture } from '../../harnesses/opencode/native-capture.js';
import { findOpenCodeDb, OPENCODE_RAW_SCHEMA, readOpenCodeStore } from '../../harnesses/opencode/store.js';
import { CODEX_RAW_SCHEMA } from '../../harnesses/codex/rollout.js';
import type { ConvertibleHarness } from '../../harnesses/launch.js';
import { perIdNativeCapture } from '../../harnesses/native-capture.js';
import type { RecordedError } from '../../schemas/common.js';
import { SAMPLE_INFO_SCHEMA, type SampleInfo } from '../../schemas/run-info.js';
import type { Task } from '../../schemas/task.js';
import type { WireTraceMode } from '../../sinks/wire-trace/sink.js';
import { runInDocker, type DockerApi } from '../../sources/docker-runner.js';
import { runProcess, type ProcessPlan } from '../../sources/process-runner.js';
import { WIRE_LOG_FILE } from '../../sources/proxy/wire-log.js';
import { attributeCalls } from '../../transforms/capture/attribute.js';
import { joinByHeader } from '../../transforms/capture/coverage.js';
import { finalizeNativeCapture } from '../../transforms/capture/finalize.js';
import type { SegmentMeta } from '../../transforms/sft/segments.js';
import { compactionCallUsage, findMainCompactions, summaryCallEvidence, writeCompactionSegments, type CompactionCallUsage } from './compaction-segments.js';
import type { Actf } from '../../schemas/actf.js';
import { completionAudit, modelIdentityAudit, thinkingArgs, thinkingAudit, wireEffortAudit, type CompletionAudit, type ModelIdentityAudit, type ThinkingAudit, type WireEffortAudit } from './audits.js';
import { convertNative, readCalls } from '../convert.js';
import { startProxyPipeline } from '../proxy.js';
import type { ResolvedModel } from './models.js';
import { copyResults } from './results.js';

export interface SampleRequest {
  index: number;
  task: Task;
  model: ResolvedModel;
}

export interface SampleSettings {
  harness: ConvertibleHarness;
  harnessVersion: string;
  bin: string;
  runDir: string;
  taskDigest: string;
  timeoutS: number;
  retries: number;
  wireTrace: WireTraceMode;
  keepThinking: boolean;
  captureCalls: boolean;
  captureDebug: 'on-error' | 'full' | 'off';
  /** model id -> the base URL its calls go to (the run's embedded scripted model, or the API base). */
  upstreams: ReadonlyMap<string, string>;
  /** Pi: enable the example sub-agent extension it ships (delegation becomes native). */
  piSubagent: boolean;
  /** --thinking: the reasoning level asked of the harness (null: its default). */
  thinking: string | null;
  /** --collect-path: extra work-dir paths copied to results/legacy/. */
  collectPaths: readonly string[];
  /** The Node binary the CLI runs on when it is not roller's own (OpenClaw's Node 24). */
  runtime?: string;
  /** Where the pinned CLI is installed (mounted read-only into a container). */
  installDir: string;
  /** The docker runner; absent: the local one. */
  docker?: { api: DockerApi; image: string };
}

/** samples/<model>/<index>_<task>, the model made one safe path segment. */
export function sampleDirOf(runDir: string, r: { index: number; task: { id: string }; model: { id: string } }): string {
  return join(runDir, 'samples', r.model.id.replace(/[^A-Za-z0-9._-]/g, '_'), `${r.index}_${r.task.id}`);
}

interface AttemptResult {
  harnessReported: Record<string, unknown> | null;
  audits: { completion: CompletionAudit; modelIdentity: ModelIdentityAudit; wireEffort: WireEffortAudit | null; thinking: ThinkingAudit | null } | null;
  status: SampleInfo['status'];
  error: RecordedError | null;
  elapsedMs: number;
  participants: ParticipantUsage[];
  requests: number;
  conversion: Record<string, unknown> | null;
  results: SampleInfo['results'];
  capture: { status: string; path: string; coverage: string | null } | null;
  logs: { stdout: string; stderr: string };
  /** Compaction segments written (a compacted main context), else undefined. */
  segments?: SegmentMeta[];
  /** Compaction summary calls, whose tokens no native message holds. */
  compactionCalls?: CompactionCallUsage[];
}

const RAW_SCHEMAS: Record<ConvertibleHarness, string> = { 'claude-code': CLAUDE_CODE_RAW_SCHEMA, codex: CODEX_RAW_SCHEMA, opencode: OPENCODE_RAW_SCHEMA, pi: PI_RAW_SCHEMA, openclaw: OPENCLAW_RAW_SCHEMA };

const CANONICAL = ['trace.jsonl', 'trace_ACTF.json', 'trace_SFT.json', 'sft_segments', 'wire_trace.jsonl', 'tools_capture.jsonl', 'results', 'capture', 'info.json'];

/**
 * One sample: up to 1 + retries complete attempts, each in a fresh HOME and work directory, the harness
 * talking to the model through its own recording proxy; then the native session converted (trace.jsonl,
 * trace_ACTF.json, trace_SFT.json), the capture published, results/ copied, info.json written. A sample
 * that fails keeps its evidence (raw, ACTF) and each attempt's process logs under rollout/, but no SFT.
 */
export async function runSample(r: SampleRequest, s: SampleSettings): Promise<SampleInfo> {
  const dir = sampleDirOf(s.runDir, r);
  await mkdir(dir, { recursive: true });
  const attempts: SampleInfo['attempts'] = [];
  const started = Date.now();
  let last: AttemptResult | undefined;
  for (let attempt = 1; attempt <= 1 + s.retries; attempt++) {
    // Nothing of an earlier attempt may mix into this one (seeds/003 §7.3).
    for (const f of CANONICAL) await rm(join(dir, f), { recursive: true, force: true });
    last = await runAttempt(r, s, dir, attempt);
    attempts.push({ attempt, status: last.status, elapsed_ms: last.elapsedMs, error: last.error });
    if (last.status === 'ok') break;
  }
  const result = last!;
  if (result.status !== 'ok') {
    await rm(join(dir, 'trace_SFT.json'), { force: true });
    await rm(join(dir, 'sft_segments'), { recursive: true, force: true });
  } else {
    await rm(join(dir, 'rollout'), { recursive: true, force: true });
  }
  const sum = (k: keyof ParticipantUsage['tokens']) => result.participants.reduce((a, p) => a + p.tokens[k], 0) + (result.compactionCalls ?? []).reduce((a, c) => a + c.tokens[k], 0);
  const sftOk = result.status === 'ok' && existsSync(join(dir, 'trace_SFT.json'));
  const conversion = (result.conversion?.trajectory_conversion as SampleInfo['runtime']['trajectory_conversion'] | undefined) ?? [
    { target: 'actf', status: 'unavailable', reason: result.error?.message ?? 'the harness wrote no native session' },
    { target: 'sft', status: 'unavailable', reason: result.error?.message ?? 'the harness wrote no native session' },
  ];
  const info: SampleInfo = {
    schema: SAMPLE_INFO_SCHEMA,
    task_id: r.task.id,
    index: r.index,
    model: r.model.id,
    harness: { name: s.harness, version: s.harnessVersion },
    status: result.status,
    error: result.error,
    attempts,
    elapsed_ms: Date.now() - started,
    usage:
      result.participants.length === 0
        ? null
        : {
            input: sum('input'),
            cached_input: sum('cache_read'),
            cache_creation: sum('cache_creation'),
            output: sum('output'),
            reasoning: sum('reasoning'),
            cost_usd: result.participants.find((p) => p.role === 'root')?.cost_usd ?? null,
            requests: result.requests,
          },
    trajectory: {
      raw_schema: existsSync(join(dir, 'trace.jsonl')) ? RAW_SCHEMAS[s.harness] : null,
      raw: existsSync(join(dir, 'trace.jsonl')) ? 'trace.jsonl' : null,
      actf: existsSync(join(dir, 'trace_ACTF.json')) ? 'trace_ACTF.json' : null,
      sft: sftOk ? 'trace_SFT.json' : null,
      ...(result.status === 'ok' && result.segments ? { sft_segments: result.segments } : {}),
    },
    results: result.results,
    runtime: {
      trajectory_conversion: conversion,
      sft_eligibility: !sftOk
        ? { eligible: false, reason: result.status !== 'ok' ? `sample ${result.status}` : (conversion.find((c) => c.target === 'sft')?.reason ?? 'no SFT') }
        : result.audits?.completion.status === 'flagged'
          ? { eligible: false, reason: `incomplete_trajectory: ${result.audits.completion.reason}` }
          : result.audits?.wireEffort?.status === 'mismatch'
            ? { eligible: false, reason: `wire_effort_mismatch: requests asked for ${[...new Set(result.audits.wireEffort.observed)].join(', ')}, not ${result.audits.wireEffort.requested}` }
            : { eligible: true, reason: null },
      completion_audit: result.audits?.completion ?? null,
      model_identity_audit: result.audits?.modelIdentity ?? null,
      ...(result.audits?.wireEffort ? { wire_effort_audit: result.audits.wireEffort } : {}),
      ...(result.audits?.thinking ? { thinking_audit: result.audits.thinking } : {}),
      participants: result.participants.map((p) => ({ participant: p.participant, role: p.role, native_id: p.native_id, parent: p.parent, depth: p.depth, spawn_tool_call_id: p.spawn_tool_call_id, messages: p.messages, tokens: p.tokens, status: p.status, status_source: p.status_source, reason: p.reason })),
      capture: result.capture,
      ...(result.compactionCalls?.length ? { compaction_calls: result.compactionCalls } : {}),
      ...(result.harnessReported ? { harness_reported: result.harnessReported } : {}),
    },
    provenance: { task_bundle_digest: s.taskDigest, task_id: r.task.id, metadata: r.task.metadata ?? null },
  };
  await writeJsonAtomic(join(dir, 'info.json'), info);
  return info;
}

async function runAttempt(r: SampleRequest, s: SampleSettings, dir: string, attempt: number): Promise<AttemptResult> {
  const started = Date.now();
  const runtime = await mkdtemp(join(tmpdir(), `roller-sample-${r.index}-`));
  const home = join(runtime, 'home');
  const work = join(runtime, 'work');
  const captureWork = join(runtime, 'capture');
  const logs = { stdout: join(runtime, 'stdout.log'), stderr: join(runtime, 'stderr.log') };
  const result: AttemptResult = { harnessReported: null, audits: null, status: 'ok', error: null, elapsedMs: 0, participants: [], requests: 0, conversion: null, results: [], capture: null, logs };
  const fail = (status: 'error' | 'timeout', code: string, message: string) => {
    if (result.status === 'ok') {
      result.status = status;
      result.error = { code, message, at: new Date().toISOString() };
    }
  };
  try {
    await mkdir(work, { recursive: true });
    for (const [rel, text] of Object.entries(r.task.files ?? {})) {
      await mkdir(join(work, rel, '..'), { recursive: true });
      await writeFile(join(work, rel), text);
    }
    const upstream = s.upstreams.get(r.model.id)!;
    const { proxy, done } = await startProxyPipeline({ upstream, outDir: captureWork, wireTrace: s.wireTrace === 'off' ? 'off' : 'full' });
    let outcome;
    try {
      const launch = { bin: s.bin, prompt: r.task.prompt, home, work, baseUrl: proxy.url, apiKey: r.model.apiKey };
      const modelArgs = [
        ...(r.model.kind === 'api' ? (s.harness === 'codex' ? ['-m', r.model.modelName] : ['--model', r.model.modelName]) : []),
        ...(s.thinking ? thinkingArgs(s.harness, s.thinking) : []),
      ];
      const plan: ProcessPlan =
        s.harness === 'codex'
          ? await codexPlan({ ...launch, extraArgs: modelArgs })
          : s.harness === 'opencode'
            ? await opencodePlan({ ...launch, ...(r.model.kind === 'api' ? { model: r.model.modelName } : {}) })
            : s.harness === 'pi'
              ? await piPlan({ ...launch, subagentExtension: s.piSubagent })
              : s.harness === 'openclaw'
                ? await openclawPlan({ ...launch, runtime: s.runtime! })
                : await claudeCodePlan({ ...launch, extraArgs: modelArgs, ...(r.model.context ? { context: r.model.context } : {}) });
      const run = { timeoutMs: (r.task.timeout_s ?? s.timeoutS) * 1000, stdoutPath: logs.stdout, stderrPath: logs.stderr };
      outcome = s.docker
        ? // Host networking: the container reaches this sample's proxy on the host's loopback.
          await runInDocker(plan, { ...run, image: s.docker.image, docker: s.docker.api, hostNetwork: true, mounts: [{ path: home }, { path: work }, { path: s.installDir, readOnly: true }] })
        : await runProcess(plan, run);
    } finally {
      await proxy.close();
      await done.catch((err: unknown) => fail('error', ErrorCode.SINK_WRITE_FAILED, `projecting the captured calls failed: ${(err as Error).message}`));
    }
    if (outcome.timedOut) fail('timeout', 'ROLLER_HARNESS_TIMEOUT', `the harness ran past ${r.task.timeout_s ?? s.timeoutS} s and was stopped (its whole process group)`);
    else if (outcome.exitCode !== 0) {
      const tail = (await readFile(logs.stderr, 'utf8').catch(() => '')).slice(-400).trim();
      fail('error', 'ROLLER_HARNESS_FAILED', `the harness exited ${outcome.exitCode ?? outcome.signal}${tail ? `: ${tail}` : ''}`);
    }

    if (s.harness === 'claude-code') result.harnessReported = await claudeCodeResult(logs.stdout);
    const callsPath = join(captureWork, 'calls.jsonl');
    const calls = existsSync(callsPath) ? await readCalls(callsPath) : [];
    result.requests = calls.length;
    const sessions = await convertNative({
      harness: s.harness,
      native: s.harness === 'claude-code' ? claudeConfigDir(home) : s.harness === 'openclaw' ? openClawStateDir(home) : home,
      out: dir,
      keepThinking: s.keepThinking,
      ...(existsSync(callsPath) ? { wire: callsPath } : {}),
    }).catch((err: unknown) => {
      fail('error', 'ROLLER_CONVERSION_FAILED', `the native session could not be converted: ${(err as Error).message}`);
      return [];
    });
    const session = sessions[0];
    if (!session) fail('error', 'ROLLER_NO_RAW_TRACE', 'no raw session trace found: the harness wrote no native session');
    else {
      result.participants = session.participants;
      result.conversion = JSON.parse(await readFile(join(dir, 'conversion.json'), 'utf8')) as Record<string, unknown>;
      // Their content lives in info.json (runtime): the sample keeps the layout of seeds/003 §2.
      await rm(join(dir, 'conversion.json'), { force: true });
      await rm(join(dir, 'usage.json'), { force: true });
      if (sessions.length > 1) fail('error', 'ROLLER_SEVERAL_SESSIONS', `the harness wrote ${sessions.length} root sessions for one task`);
    }

    const compacted = session ? await findMainCompactions(s.harness, join(dir, 'trace.jsonl'), calls, session.participants) : null;
    if (s.captureCalls && session) {
      const capDir = join(dir, 'capture', `attempt-${String(attempt).padStart(4, '0')}`);
      const claw = s.harness === 'openclaw' ? findOpenClawStore(openClawStateDir(home)) : undefined;
      const native =
        claw
          ? { ...openClawNativeCapture(readOpenClawStore(claw).find((x) => x.transcript.id === session.sessionId)!, s.harnessVersion, claw), nativeFiles: [] }
          : s.harness === 'opencode'
          ? { ...openCodeNativeCapture(readOpenCodeStore(findOpenCodeDb(home)), s.harnessVersion), nativeFiles: [] }
          : s.harness === 'pi'
            ? {
                // responseId = the Chat Completions id: a per-id join; no delegation without an extension.
                ...perIdNativeCapture({ harness: { name: 'pi', version: s.harnessVersion }, participants: session.participants, background: false, nativeFiles: [] }),
                capabilities: { native_output_coverage: 'per_id' as const, delegation: s.piSubagent ? ('native' as const) : ('not_available_in_bundled_profile' as const), background: false },
              }
            : perIdNativeCapture({
                harness: { name: s.harness, version: s.harnessVersion },
                participants: session.participants,
                background: s.harness === 'claude-code',
                nativeFiles: [],
                ...(s.harness === 'codex' ? { agentPaths: await codexAgentPaths(join(dir, 'trace.jsonl')) } : {}),
              });
      if (compacted) native.recordedOutputs = summaryCallEvidence(compacted);
      const manifest = await finalizeNativeCapture(native, {
        dir: capDir,
        calls: calls.filter((c) => (c.context as { generate?: unknown } | null)?.generate !== false),
        attempt,
        scope: proxy.captureScope,
        debugRetention: result.status === 'ok' ? s.captureDebug : s.captureDebug === 'off' ? 'off' : 'full',
        wireLog: join(captureWork, WIRE_LOG_FILE),
      });
      result.capture = { status: manifest.capture_status, path: `capture/attempt-${String(attempt).padStart(4, '0')}`, coverage: manifest.coverage?.status ?? null };
    }
    if (session) {
      const root = session.participants.find((p) => p.role === 'root');
      const byId = attributeCalls(calls, session.participants);
      // OpenCode keeps no response ids: its calls join their session by the x-session-id header.
      const attributed = s.harness === 'opencode' ? joinByHeader(byId, { field: 'session_id', participants: Object.fromEntries(session.participants.map((p) => [p.native_id, p.participant])) }) : byId;
      const actf = existsSync(join(dir, 'trace_ACTF.json')) ? (JSON.parse(await readFile(join(dir, 'trace_ACTF.json'), 'utf8')) as Actf) : null;
      if (compacted && result.conversion) {
        const segments = await writeCompactionSegments(dir, actf, byId, compacted, s.keepThinking, result.conversion.trajectory_conversion as SampleInfo['runtime']['trajectory_conversion']);
        if (segments) result.segments = segments;
      }
      if (compacted) result.compactionCalls = compactionCallUsage(compacted, calls);
      result.audits = {
        completion: completionAudit(attributed.filter((c) => c.participant_id === root?.participant && c.execution_status === 'completed'), actf),
        modelIdentity: modelIdentityAudit(attributed),
        wireEffort: s.thinking ? wireEffortAudit(calls.filter((c) => (c.context as { generate?: unknown } | null)?.generate !== false), s.thinking) : null,
        thinking: s.thinking ? thinkingAudit(actf, s.thinking, s.keepThinking) : null,
      };
    }
    if (s.wireTrace === 'full' && existsSync(join(captureWork, 'wire_trace.jsonl'))) await copyFile(join(captureWork, 'wire_trace.jsonl'), join(dir, 'wire_trace.jsonl'));
    if (s.harness === 'codex' && s.wireTrace !== 'off' && existsSync(join(captureWork, 'tools_capture.jsonl'))) await copyFile(join(captureWork, 'tools_capture.jsonl'), join(dir, 'tools_capture.jsonl'));

    const { files, refused } = await copyResults(work, r.task.output_dirs ?? [], join(dir, 'results'));
    // --collect-path output goes to results/legacy/ (seeds/003 §5.7), under the same safety rules.
    const legacy = await copyResults(work, s.collectPaths, join(dir, 'results', 'legacy'));
    result.results = [...files, ...legacy.files.map((f) => ({ ...f, path: `legacy/${f.path}` }))];
    refused.push(...legacy.refused);
    if (refused.length > 0) fail('error', 'ROLLER_UNSAFE_OUTPUT', `the task output holds files roller does not copy: ${refused.join('; ')} (the safe files were copied)`);
  } catch (err) {
    fail('error', 'ROLLER_SAMPLE_FAILED', (err as Error).message);
  } finally {
    if (result.status !== 'ok') {
      // Each failed attempt's process logs stay with the sample (seeds/003 §7.3).
      await mkdir(join(dir, 'rollout'), { recursive: true });
      for (const [name, path] of Object.entries(logs)) if (existsSync(path)) await copyFile(path, join(dir, 'rollout', `${s.harness}-${name}.attempt-${attempt}.log`));
    }
    await rm(runtime, { recursive: true, force: true });
  }
  result.elapsedMs = Date.now() - started;
  return result;
}

/** Codex sub-agent paths from the rollouts' session_meta records (trace.jsonl), for naming relations. */
async function codexAgentPaths(trace: string): Promise<Record<string, string>> {
  const paths: Record<string, string> = {};
  const text = await readFile(trace, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.includes('"session_meta"')) continue;
    const p = (JSON.parse(line) as { payload?: { agent_path?: unknown; id?: unknown } }).payload;
    if (typeof p?.agent_path === 'string' && typeof p.id === 'string') paths[p.id] ??= p.agent_path;
  }
  return paths;
}

/**
 * What Claude Code itself reported at the end of the run (its stream-json `result` event): the main agent's
 * usage, and modelUsage over every agent — what roller's per-participant totals must add up to.
 */
async function claudeCodeResult(stdout: string): Promise<Record<string, unknown> | null> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  const line = text.split('\n').reverse().find((l) => l.includes('"type":"result"'));
  if (!line) return null;
  try {
    const r = JSON.parse(line) as { usage?: Record<string, number>; modelUsage?: Record<string, Record<string, number>>; total_cost_usd?: number };
    const all = { input: 0, cache_creation: 0, cache_read: 0, output: 0 };
    for (const m of Object.values(r.modelUsage ?? {})) {
      all.input += m.inputTokens ?? 0;
      all.cache_creation += m.cacheCreationInputTokens ?? 0;
      all.cache_read += m.cacheReadInputTokens ?? 0;
      all.output += m.outputTokens ?? 0;
    }
    const u = r.usage ?? {};
    return {
      source: 'stream-json result event',
      main_agent: { input: u.input_tokens ?? 0, cache_creation: u.cache_creation_input_tokens ?? 0, cache_read: u.cache_read_input_tokens ?? 0, output: u.output_tokens ?? 0 },
      all_agents: all,
      total_cost_usd: r.total_cost_usd ?? null,
    };
  } catch {
    return null;
  }
}
