import { join } from 'node:path';
import type { Rejected } from '../core/rejected.js';
import { itemsOf } from '../core/document-sink.js';
import { createStageContext } from '../core/context.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import { createActfSink } from '../sinks/actf/sink.js';
import { createConversionJsonSink } from '../sinks/conversion/sink.js';
import { createSftSink } from '../sinks/sft/sink.js';
import { createTraceSink } from '../sinks/trace/sink.js';
import { createUsageJsonSink } from '../sinks/usage/sink.js';
import { readCallsLazily } from '../sources/archive/calls-reader.js';
import { relativeStatusSources } from '../harnesses/native-archive.js';
import type { HarnessAdapter, SessionConversion } from '../harnesses/adapter.js';
import type { SinkFailure, UserSinks } from '../sinks/user-sink.js';
import { withoutReasoning } from '../transforms/actf/without-reasoning.js';
import { attributionOf } from './attribution.js';
import { openUserSinks, sinkDeadlines, type SinkSpec } from './user-sinks.js';
import { harnessAdapter, isShippedAdapter } from '../harnesses/index.js';
import { partialUsage, type ParticipantUsage } from '../schemas/participant-usage.js';
import { Actf } from '../schemas/actf.js';
import type { Call } from '../schemas/call.js';
import { checkValue } from '../schemas/validate.js';
import { formatJsonPath } from '../core/json-locate.js';
import { projectSft } from '../transforms/sft/project.js';

export interface ConvertOptions {
  harness: string;
  native: string;
  out: string;
  /** calls.jsonl from roller's proxy: system prompt and tools come from the captured requests. */
  wire?: string;
  /** A collect sample: no usage.json / conversion.json (their content goes into info.json). */
  sampleLayout?: boolean;
  /** The calls of `wire`, already read (collect and reprocess read them once for every stage). */
  calls?: readonly Call[];
  /** The CLI's --output-format stream-json stdout: cross-checked against the native files. */
  stream?: string;
  /** A user's calls sinks (they get the --wire calls, attributed); samples sinks are refused (convert has none). */
  sinkSpecs?: SinkSpec[];
  sinks?: UserSinks[];
  /** --sink-timeout: seconds a user sink may take over one item, and to finish (default 120). */
  sinkTimeoutS?: number;
  keepThinking: boolean;
}

export interface ConvertedSession {
  /** The trace_ACTF.json written, and what conversion.json says (for callers that go on in memory). */
  actf: Actf;
  conversion: Record<string, unknown>;
  sessionId: string;
  dir: string;
  steps: number;
  sft: { status: 'ok' | 'unavailable'; reason: string | null };
  participants: ParticipantUsage[];
  rejectedLines: number;
  /** The lines that could not be read (file, line, why), for the caller to show. */
  rejects: readonly Rejected[];
  /** Disagreements between the stream-json stdout and the native files (null without --stream). */
  streamCheck: string[] | null;
  /** User sinks that failed (the converted files are complete regardless). */
  sinkFailures?: SinkFailure[];
  /** What the adapter adds to usage.json (Codex and Claude Code: spawns_without_participant). */
  usageExtra?: Record<string, unknown>;
}

async function wireCalls(options: ConvertOptions): Promise<Call[] | undefined> {
  if (options.calls) return [...options.calls];
  return options.wire ? await readCalls(options.wire) : undefined;
}

/** The calls of a calls.jsonl (roller proxy's), contexts parsed only where a stage reads them. */
export function readCalls(path: string): Promise<Call[]> {
  return readCallsLazily(path, { hint: '--wire takes the calls.jsonl written by roller proxy', code: ErrorCode.CONVERSION_INVALID });
}

/** `roller convert`: an existing native session into trace.jsonl, trace_ACTF.json, trace_SFT.json and usage.json. */
export async function convertNative(options: ConvertOptions): Promise<ConvertedSession[]> {
  const sessions = await convertSessions(options);
  return sessions.map((s) => ({ ...s, participants: relativeStatusSources(s.participants, options.native) }));
}

async function convertSessions(options: ConvertOptions): Promise<ConvertedSession[]> {
  const adapter = harnessAdapter(options.harness);
  const user = await openUserSinks(options.sinkSpecs ?? [], options.sinks ?? [], process.cwd(), sinkDeadlines(options.sinkTimeoutS));
  if (user.takesSamples) {
    await user.end();
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink ${user.names.join(', ')}: convert writes sessions, not samples; a samples sink runs with collect or reprocess (a calls sink here gets the --wire calls)`);
  }
  try {
    const sessions = await convertWith(adapter, options);
    // A calls sink gets the --wire calls, attributed as collect attributes them, each to the session it belongs to.
    const calls = user.names.length > 0 ? await wireCalls(options) : undefined;
    for (const s of calls ? sessions : []) {
      const input = { nativeRoot: options.native, version: 'unknown', session: s, tracePath: join(s.dir, 'trace.jsonl'), profile: null };
      const { attribute } = await attributionOf(adapter, input);
      await user.addCalls(calls!.map(attribute).filter((c) => c.participant_id !== null), s.dir);
    }
    const failures = await user.end();
    return sessions.map((s) => ({ ...s, sinkFailures: failures }));
  } catch (err) {
    await user.end();
    throw err;
  }
}

async function convertWith(adapter: HarnessAdapter, options: ConvertOptions): Promise<ConvertedSession[]> {
  const calls = await wireCalls(options);
  const sessions = await adapter.convert(options.native, { ...(calls ? { calls } : {}), ...(options.stream ? { stream: options.stream } : {}) });
  const results: ConvertedSession[] = [];
  for (const session of sessions) {
    results.push(
      await writeConverted({
        ...session,
        dir: sessions.length === 1 ? options.out : join(options.out, session.sessionId),
        harness: adapter.name,
        rawSchema: adapter.rawSchema,
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
      }),
    );
  }
  return results;
}

/**
 * The outputs every converter writes for one root participant: trace.jsonl, trace_ACTF.json (checked),
 * trace_SFT.json (when the projection is possible), usage.json and conversion.json.
 */
async function writeConverted(o: SessionConversion & { dir: string; harness: string; rawSchema: string; keepThinking: boolean; sampleLayout: boolean }): Promise<ConvertedSession> {
  const ctx = createStageContext();
  await createTraceSink({ path: join(o.dir, 'trace.jsonl') }).consume(
    (async function* () {
      yield* o.trace;
    })(),
    ctx,
  );
  // --no-keep-thinking: reasoning emptied in ACTF as in SFT (trace.jsonl above keeps it as the harness wrote it).
  if (!o.keepThinking) o = { ...o, actf: withoutReasoning(o.actf) };
  const issues = checkValue(Actf, o.actf);
  if (issues.length > 0) {
    const whose = isShippedAdapter(harnessAdapter(o.harness)) ? 'a bug in roller, please report it with the input' : `a bug in the registered '${o.harness}' adapter: roller checks every ACTF before writing it`;
    throw new RollerError(ErrorCode.CONVERSION_INVALID, `${o.where}: the ACTF produced is not valid (${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')}); this is ${whose}`);
  }
  await createActfSink({ path: join(o.dir, 'trace_ACTF.json') }).consume(itemsOf(o.actf), ctx);
  const rejects = o.rejects ?? [];
  const damaged = rejects.filter((r) => o.mainFiles?.includes(r.origin.file ?? ''));
  const blocker =
    o.sftBlocker ??
    (damaged.length > 0
      ? `the main session is damaged (${damaged.map((r) => `${r.origin.file}:${r.origin.line}: ${r.reason}`).join('; ')}): its last messages may be incomplete, so it is not exported as SFT`
      : o.actf.steps.length === 0
        ? 'the main session holds no assistant step'
        : null);
  const sft = blocker ? ({ status: 'unavailable', reason: blocker } as const) : projectSft(o.actf, { keepThinking: o.keepThinking });
  if (sft.status === 'ok') await createSftSink({ path: join(o.dir, 'trace_SFT.json') }).consume(itemsOf(sft.record), ctx);
  const gap = partialUsage(o.participants);
  const partial = gap ? { partial: gap } : {};
  if (!o.sampleLayout) await createUsageJsonSink({ path: join(o.dir, 'usage.json') }).consume(itemsOf({ schema: 'roller.usage/v1', harness: o.harness, session_id: o.sessionId, participants: o.participants, ...partial, ...(o.usageExtra ?? {}) }), ctx);
  const check = o.streamCheck ?? null;
  const conversion = {
    raw_schema: o.rawSchema,
    source: o.source,
    system_prompt_source: o.actf.system_prompt_source,
    tools_source: o.actf.tools_source,
    trajectory_conversion: [
      { target: 'actf', status: 'ok', reason: null },
      { target: 'sft', status: sft.status, reason: sft.status === 'ok' ? null : sft.reason },
    ],
    rejected_lines: rejects.map((r) => ({ code: r.code, reason: r.reason, origin: r.origin })),
    stream_check: check === null ? null : { source: check.source, agrees: check.problems.length === 0, problems: check.problems },
    ...(o.readNotes?.length ? { read_notes: o.readNotes } : {}),
  };
  if (!o.sampleLayout) await createConversionJsonSink({ path: join(o.dir, 'conversion.json') }).consume(itemsOf(conversion), ctx);
  return {
    actf: o.actf,
    conversion,
    sessionId: o.sessionId,
    dir: o.dir,
    steps: o.actf.steps.length,
    sft: { status: sft.status, reason: sft.status === 'ok' ? null : sft.reason },
    participants: o.participants,
    rejectedLines: rejects.length,
    rejects,
    streamCheck: check === null ? null : check.problems,
    ...(o.usageExtra ? { usageExtra: o.usageExtra } : {}),
  };
}
