import { readdirSync } from 'node:fs';
import type { ConvertHarness } from '../harnesses/launch.js';
import { dirname, join } from 'node:path';
import type { Rejected } from '../core/rejected.js';
import { codexToActf } from '../harnesses/codex/actf.js';
import { codexParticipants, missingChildren, spawnsWithoutParticipant } from '../harnesses/codex/participants.js';
import { codexSftBlocker } from '../harnesses/codex/sft-rules.js';
import { CODEX_RAW_SCHEMA, findRollouts, readThread, type CodexThread } from '../harnesses/codex/rollout.js';
import { writeJsonAtomic } from '../core/atomic-write.js';
import { createStageContext } from '../core/context.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import { createJsonlSink } from '../core/jsonl-sink.js';
import { readCallsLazily } from '../sources/archive/calls-reader.js';
import { relativeStatusSources } from '../harnesses/native-archive.js';
import { claudeCodeToActf } from '../harnesses/claude-code/actf.js';
import { findSessionFiles, readNativeSession } from '../harnesses/claude-code/native-session.js';
import { participantUsage } from '../harnesses/claude-code/participants.js';
import { type ParticipantUsage } from '../schemas/participant-usage.js';
import { CLAUDE_CODE_RAW_SCHEMA, mergeTrace } from '../harnesses/claude-code/trace.js';
import { crossCheckStream, readStreamJson } from '../harnesses/claude-code/stream-json.js';
import { Actf } from '../schemas/actf.js';
import type { Call } from '../schemas/call.js';
import { checkValue } from '../schemas/validate.js';
import { formatJsonPath } from '../core/json-locate.js';
import { projectSft } from '../transforms/sft/project.js';
import { openCodeToActf } from '../harnesses/opencode/actf.js';
import { findOpenClawStore, OPENCLAW_RAW_SCHEMA, openClawParticipants, openClawToActf, openClawTrees, readOpenClawStore } from '../harnesses/openclaw/store.js';
import { deepSeekParticipants, deepSeekToActf, readDeepSeekRun } from '../harnesses/deepseek/events.js';
import { hermesParticipants, hermesToActf } from '../harnesses/hermes/participants.js';
import { hermesEvents, readHermes } from '../harnesses/hermes/store.js';
import { DEEPSEEK_EVENTS_SCHEMA, HERMES_EVENTS_SCHEMA } from '../schemas/harness-events.js';
import { findPiSessions, PI_RAW_SCHEMA, piParticipants, piToActf, readPiSession } from '../harnesses/pi/session.js';
import { openCodeEvents } from '../harnesses/opencode/events.js';
import { openCodeParticipants } from '../harnesses/opencode/participants.js';
import { findOpenCodeDb, OPENCODE_RAW_SCHEMA, readOpenCodeStore } from '../harnesses/opencode/store.js';

export interface ConvertOptions {
  harness: ConvertHarness;
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
  if (options.harness === 'codex') return convertCodex(options);
  if (options.harness === 'opencode') return convertOpenCode(options);
  if (options.harness === 'pi') return convertPi(options);
  if (options.harness === 'openclaw') return convertOpenClaw(options);
  if (options.harness === 'hermes') return convertHermes(options);
  if (options.harness === 'deepseek') return convertDeepSeek(options);
  const files = await findSessionFiles(options.native);
  const calls = await wireCalls(options);
  const results: ConvertedSession[] = [];
  for (const file of files) {
    const session = await readNativeSession(file);
    const wire = calls?.filter((c) => c.native_identity.session_id === session.sessionId);
    const participants = participantUsage(session);
    const problems = options.stream ? crossCheckStream(await readStreamJson(options.stream), participants) : null;
    results.push(
      await writeConverted({
        dir: files.length === 1 ? options.out : join(options.out, session.sessionId),
        harness: options.harness,
        sessionId: session.sessionId,
        trace: mergeTrace(session),
        actf: claudeCodeToActf(session.main, wire && wire.length > 0 ? { wire } : {}),
        participants,
        rawSchema: CLAUDE_CODE_RAW_SCHEMA,
        source: { root: session.root, main: session.mainFile, subagents: session.subagents.map((x) => x.records[0]?.file ?? `agent-${x.agentId}.jsonl`) },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: file,
        rejects: session.rejects,
        mainFiles: [session.mainFile],
        streamCheck: problems === null ? null : { source: options.stream!, problems },
      }),
    );
  }
  return results;
}

/** Codex: rollouts grouped by session (root thread and its children); the ACTF is the root thread's. */
async function convertCodex(options: ConvertOptions): Promise<ConvertedSession[]> {
  const files = findRollouts(options.native);
  const root = files.length === 1 ? dirname(files[0]!) : options.native;
  const rejects: Rejected[] = [];
  const threads: CodexThread[] = [];
  for (const f of files) threads.push(await readThread(f, root, rejects));
  // A damaged thread (its first line cut) keeps its place: identified by its file name, converted from what is intact.
  const calls = await wireCalls(options);
  const sessions = [...new Set(threads.map((t) => t.sessionId))];
  const results: ConvertedSession[] = [];
  for (const sessionId of sessions) {
    const tree = threads.filter((t) => t.sessionId === sessionId);
    const rootThread = tree.find((t) => t.parentThreadId === null) ?? tree[0]!;
    const ordered = [rootThread, ...tree.filter((t) => t !== rootThread)];
    const wire = calls?.filter((c) => c.native_identity.thread_id === rootThread.threadId);
    const actf = codexToActf(rootThread, wire && wire.length > 0 ? { wire } : {});
    const found = codexParticipants(ordered);
    const participants = [...found, ...missingChildren(ordered, found)];
    results.push(
      await writeConverted({
        dir: sessions.length === 1 ? options.out : join(options.out, sessionId),
        harness: 'codex',
        sessionId,
        // trace.jsonl: every thread's rollout, root first, each record as the CLI wrote it.
        trace: ordered.flatMap((t) => t.records.map((r) => r.record)),
        actf,
        participants,
        rawSchema: CODEX_RAW_SCHEMA,
        source: { root, threads: ordered.map((t) => t.file) },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: rootThread.file,
        sftBlocker: codexSftBlocker(actf),
        usageExtra: { spawns_without_participant: spawnsWithoutParticipant(ordered) },
        rejects: rejects.filter((r) => ordered.some((t) => t.file === r.origin.file)),
        mainFiles: [rootThread.file],
      }),
    );
  }
  return results;
}

/**
 * OpenCode: the SQLite store read with SQLite (sessions, messages, parts), one converted session per root
 * session with its child sessions; trace.jsonl holds the rows as roller.opencode-events/v1 records.
 */
async function convertOpenCode(options: ConvertOptions): Promise<ConvertedSession[]> {
  const store = readOpenCodeStore(findOpenCodeDb(options.native));
  const calls = await wireCalls(options);
  const participants = openCodeParticipants(store);
  const roots = store.sessions.filter((s) => s.parentId === null);
  const results: ConvertedSession[] = [];
  for (const root of roots) {
    const tree = new Set<string>([root.id]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of store.sessions) if (s.parentId && tree.has(s.parentId) && !tree.has(s.id)) (tree.add(s.id), (grew = true));
    }
    results.push(
      await writeConverted({
        dir: roots.length === 1 ? options.out : join(options.out, root.id),
        harness: 'opencode',
        sessionId: root.id,
        trace: openCodeEvents(store, tree),
        actf: openCodeToActf(store, root.id, calls ? { wire: calls } : {}),
        participants: participants.filter((p) => tree.has(p.native_id)),
        rawSchema: OPENCODE_RAW_SCHEMA,
        source: { database: store.path, sessions: [...tree] },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: `${store.path} (session ${root.id})`,
      }),
    );
  }
  return results;
}

/** Pi: each session file (the active branch of its entry tree) into the same outputs; trace.jsonl keeps every record. */
async function convertPi(options: ConvertOptions): Promise<ConvertedSession[]> {
  const files = findPiSessions(options.native);
  const calls = await wireCalls(options);
  const results: ConvertedSession[] = [];
  for (const file of files) {
    const session = readPiSession(file);
    results.push(
      await writeConverted({
        dir: files.length === 1 ? options.out : join(options.out, session.id),
        harness: 'pi',
        sessionId: session.id,
        trace: session.records,
        actf: piToActf(session, calls ? { wire: calls } : {}),
        participants: piParticipants(session),
        rawSchema: PI_RAW_SCHEMA,
        source: { session: file },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: file,
      }),
    );
  }
  return results;
}

/**
 * The outputs every converter writes for one root participant: trace.jsonl, trace_ACTF.json (checked),
 * trace_SFT.json (when the projection is possible), usage.json and conversion.json.
 */
async function writeConverted(o: {
  dir: string;
  harness: ConvertHarness;
  sessionId: string;
  trace: Iterable<unknown>;
  actf: Actf;
  participants: ParticipantUsage[];
  rawSchema: string;
  source: Record<string, unknown>;
  keepThinking: boolean;
  sampleLayout: boolean;
  /** Where the input was, for the error that names an invalid ACTF. */
  where: string;
  /** A harness rule that rules SFT out before projecting (Codex). */
  sftBlocker?: string | null;
  /** Extra usage.json fields (Codex: spawns without a participant). */
  usageExtra?: Record<string, unknown>;
  rejects?: readonly Rejected[];
  /** The root participant's own files: a damaged line there makes its trajectory incomplete (no SFT). */
  mainFiles?: readonly string[];
  streamCheck?: { source: string; problems: string[] } | null;
}): Promise<ConvertedSession> {
  await createJsonlSink({ path: join(o.dir, 'trace.jsonl') }).consume(
    (async function* () {
      yield* o.trace;
    })(),
    createStageContext(),
  );
  const issues = checkValue(Actf, o.actf);
  if (issues.length > 0) {
    throw new RollerError(ErrorCode.CONVERSION_INVALID, `${o.where}: the ACTF produced is not valid (${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')}); this is a roller bug, please report it with the input`);
  }
  await writeJsonAtomic(join(o.dir, 'trace_ACTF.json'), o.actf);
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
  if (sft.status === 'ok') await writeJsonAtomic(join(o.dir, 'trace_SFT.json'), sft.record);
  const missing = o.participants.filter((p) => p.status === 'missing');
  const partial = missing.length === 0 ? {} : { partial: { missing: missing.map((p) => p.participant), reason: 'participants named by their parent have no records: their tokens are unknown and not in any total' } };
  if (!o.sampleLayout) await writeJsonAtomic(join(o.dir, 'usage.json'), { schema: 'roller.usage/v1', harness: o.harness, session_id: o.sessionId, participants: o.participants, ...partial, ...(o.usageExtra ?? {}) });
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
  };
  if (!o.sampleLayout) await writeJsonAtomic(join(o.dir, 'conversion.json'), conversion);
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
  };
}

/** Hermes: a state.db (SQLite) or a roller.hermes-events/v1 file; one converted session per root participant. */
async function convertHermes(options: ConvertOptions): Promise<ConvertedSession[]> {
  const data = readHermes(options.native);
  const { participants, ownerOf } = hermesParticipants(data);
  const roots = participants.filter((p) => p.role === 'root');
  const results: ConvertedSession[] = [];
  for (const root of roots) {
    // The root's tree: participants below it, and every session of theirs (compression chains included).
    const tree = new Set<string>([root.participant]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const p of participants) if (p.parent && tree.has(p.parent) && !tree.has(p.participant)) (tree.add(p.participant), (grew = true));
    }
    const sessions = new Set(data.sessions.filter((s) => tree.has(`session:${ownerOf.get(s.id)}`)).map((s) => s.id));
    results.push(
      await writeConverted({
        dir: roots.length === 1 ? options.out : join(options.out, root.native_id),
        harness: 'hermes',
        sessionId: root.native_id,
        trace: hermesEvents(data, sessions),
        actf: hermesToActf(data, root.native_id, ownerOf),
        participants: participants.filter((p) => tree.has(p.participant)),
        rawSchema: HERMES_EVENTS_SCHEMA,
        source: { input: options.native, sessions: [...sessions] },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: options.native,
      }),
    );
  }
  return results;
}

/** DeepSeek: one roller.deepseek-events/v1 log per run (a file, or every *.jsonl under a directory). */
async function convertDeepSeek(options: ConvertOptions): Promise<ConvertedSession[]> {
  const files = options.native.endsWith('.jsonl')
    ? [options.native]
    : readdirSync(options.native, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.jsonl')).map((e) => join(e.parentPath, e.name)).sort();
  if (files.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no roller.deepseek-events/v1 log under ${options.native}`);
  const results: ConvertedSession[] = [];
  for (const file of files) {
    const run = readDeepSeekRun(file);
    results.push(
      await writeConverted({
        dir: files.length === 1 ? options.out : join(options.out, run.sessionId),
        harness: 'deepseek',
        sessionId: run.sessionId,
        trace: run.events,
        actf: deepSeekToActf(run),
        participants: deepSeekParticipants(run),
        rawSchema: DEEPSEEK_EVENTS_SCHEMA,
        source: { log: file },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: file,
      }),
    );
  }
  return results;
}

/**
 * OpenClaw: each root transcript of the agent store (SQLite) with its sub-agent sessions (Gateway mode) —
 * trace.jsonl keeps the root's entries as written, then each child's (each begins with its session entry).
 */
async function convertOpenClaw(options: ConvertOptions): Promise<ConvertedSession[]> {
  const db = findOpenClawStore(options.native);
  const trees = openClawTrees(readOpenClawStore(db));
  const calls = await wireCalls(options);
  if (trees.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${db} holds no transcript`);
  const results: ConvertedSession[] = [];
  for (const tree of trees) {
    const s = tree.root;
    const participants = openClawParticipants(tree);
    // The wire's system prompt and tools: the first captured call of the root (by response id when the
    // store keeps them; exec keeps none, and then its one transcript owns every call of its proxy).
    const rootIds = new Set(participants[0]!.message_ids);
    const rootCalls = calls?.filter((c) => c.response_id !== null && rootIds.has(c.response_id));
    const wire = rootCalls && rootCalls.length > 0 ? rootCalls : calls && trees.length === 1 && tree.children.length === 0 ? calls : undefined;
    results.push(
      await writeConverted({
        dir: trees.length === 1 ? options.out : join(options.out, s.transcript.id),
        harness: 'openclaw',
        sessionId: s.transcript.id,
        trace: [...s.transcript.records, ...tree.children.flatMap((c) => c.session.transcript.records)],
        actf: openClawToActf(s, wire ? { wire } : {}),
        participants,
        rawSchema: OPENCLAW_RAW_SCHEMA,
        source: { database: db, session: s.transcript.id },
        keepThinking: options.keepThinking,
        sampleLayout: options.sampleLayout ?? false,
        where: `${db} (session ${s.transcript.id})`,
      }),
    );
  }
  return results;
}
