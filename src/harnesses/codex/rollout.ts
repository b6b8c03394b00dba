import { readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import type { Rejected } from '../../core/rejected.js';
import { CODEX_VERIFIED_VERSIONS } from './launch.js';

type Json = Record<string, any>;

export const CODEX_RAW_SCHEMA = 'codex-session-jsonl';

/**
 * Every record type a Codex release in the version matrix wrote (docs/VERSIONS.md); any other is refused, loudly.
 * inter_agent_communication: multi_agent v2 in 0.140, a parent's message to a child (author, recipient, content) in
 * the child's rollout; from 0.150 only its _metadata is written. Kept in trace.jsonl as written; it carries no tokens.
 */
const KNOWN = new Set(['session_meta', 'turn_context', 'world_state', 'response_item', 'event_msg', 'token_usage_record', 'inter_agent_communication', 'inter_agent_communication_metadata']);

/**
 * Codex before 0.34 wrote another rollout shape: a header line {id, timestamp, instructions}, then the bare
 * response items and {record_type: "state"} lines, and no token counts at all. Such lines are read as the
 * records they are (session_meta, response_item, legacy_state); trace.jsonl keeps them as written.
 */
const LEGACY_ITEMS = new Set(['message', 'reasoning', 'function_call', 'function_call_output', 'local_shell_call', 'custom_tool_call', 'custom_tool_call_output', 'web_search_call']);

const isLegacyHeader = (rec: Json) => rec.type === undefined && rec.record_type === undefined && typeof rec.id === 'string' && typeof rec.timestamp === 'string';

/** A line of a rollout as a record of the current shape (a legacy line mapped; any other unchanged). */
export function asRecord(rec: Json, legacy: boolean): Json {
  if (!legacy) return rec;
  if (isLegacyHeader(rec)) return { type: 'session_meta', timestamp: rec.timestamp, payload: { id: rec.id, timestamp: rec.timestamp, instructions: rec.instructions ?? null, legacy: true } };
  if (rec.record_type === 'state') return { type: 'legacy_state', payload: rec };
  if (typeof rec.type === 'string' && LEGACY_ITEMS.has(rec.type)) return { type: 'response_item', payload: rec };
  return rec;
}

/** The producer version as its records say (session_meta.cli_version), for errors and the matrix. */
export function producerVersion(meta: Json | undefined): string {
  if (typeof meta?.cli_version === 'string') return meta.cli_version;
  return meta?.legacy === true ? 'before 0.34 (its rollouts carry no cli_version)' : 'unknown (no session_meta before this line)';
}

const verifiedAgainst = () => `roller reads the rollouts of Codex ${CODEX_VERIFIED_VERSIONS.join(', ')}`;

export interface RolloutRecord {
  record: Json;
  /** The line as the CLI wrote it, where that was an older shape read as `record`. */
  raw?: Json;
  file: string;
  line: number;
}

/** One thread = one rollout file (reference/harnesses/codex.md §6). */
export interface CodexThread {
  threadId: string;
  sessionId: string;
  parentThreadId: string | null;
  depth: number;
  nickname: string | null;
  file: string;
  records: RolloutRecord[];
  /**
   * The thread's own records: for a v2 warm fork, the replayed parent prefix (a second session_meta and the
   * parent's history up to subagent_history_start_ordinal) is left out — it is the parent's, not the child's.
   */
  own: RolloutRecord[];
  meta: Json;
  /** Set when the thread replays a parent whose rollout was not read: its own records cannot be told apart. */
  replayUnknown?: string;
}

/** Rollout files under a CODEX_HOME, its sessions/ dir, or one file. */
export function findRollouts(path: string): string[] {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: not found`);
  if (info.isFile()) return [path];
  const root = statSync(join(path, 'sessions'), { throwIfNoEntry: false })?.isDirectory() ? join(path, 'sessions') : path;
  const files = readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /^rollout-.*\.jsonl$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  if (files.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: no Codex rollout (sessions/**/rollout-*.jsonl) found; give a CODEX_HOME or a rollout file`);
  return files;
}

const isCount = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkShape(rec: Json, file: string, line: number, meta: Json | undefined): void {
  const fail = (what: string) => {
    throw new RollerError(
      ErrorCode.NATIVE_SHAPE_UNKNOWN,
      `${file}:${line}: a '${rec.type}' record ${what} (written by Codex ${producerVersion(meta)}); ${verifiedAgainst()} — no release among them wrote this shape: run \`roller verify --harness codex --versions <this version> --record\` and teach the adapter, or report it with this file`,
      { origin: { file, line } },
    );
  };
  if (rec.type === 'legacy_state') return;
  if (!KNOWN.has(rec.type)) fail('of a type no verified release wrote');
  if (typeof rec.payload !== 'object' || rec.payload === null) fail('has no payload object');
  const p = rec.payload as Json;
  if (rec.type === 'session_meta' && typeof p.id !== 'string') fail('has no id');
  if (rec.type === 'response_item' && typeof p.type !== 'string') fail('has no payload.type');
  if (rec.type === 'token_usage_record' && (typeof p.response_id !== 'string' || typeof p.usage !== 'object')) fail('has no response_id or usage');
  // One of the two counts is enough (the other is read from it, and said in read notes); neither is a shape no release wrote.
  if (rec.type === 'event_msg' && p.type === 'token_count' && p.info != null && !isCount(p.info.total_token_usage) && !isCount(p.info.last_token_usage)) fail('(token_count) has neither total_token_usage nor last_token_usage');
}

export async function readThread(path: string, root: string, rejects: Rejected[]): Promise<CodexThread> {
  const file = relative(root, path) || basename(path);
  const records: RolloutRecord[] = [];
  const ctx = createStageContext({ onReject: (r) => rejects.push(r) });
  let legacy = false;
  let meta: Json | undefined;
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject', name: file })(ctx)) {
    const raw = env.data as Json;
    const line = env.origin.line!;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:${line}: a line that is not a JSON object; not a Codex rollout`, { origin: env.origin });
    }
    if (records.length === 0 && isLegacyHeader(raw)) legacy = true;
    const rec = asRecord(raw, legacy);
    if (typeof rec.type !== 'string') {
      throw new RollerError(
        ErrorCode.NATIVE_SHAPE_UNKNOWN,
        `${file}:${line}: a line without a "type"${legacy ? ' that is no response item of the pre-0.34 shape' : ''} (written by Codex ${producerVersion(meta)}); not a Codex rollout shape any verified release wrote; ${verifiedAgainst()}`,
        { origin: env.origin },
      );
    }
    if (rec.type === 'session_meta' && meta === undefined) meta = rec.payload as Json;
    checkShape(rec, file, line, meta);
    records.push(rec === raw ? { record: rec, file, line } : { record: rec, raw, file, line });
  }
  return threadOfRecords(records, file, rejects.some((r) => r.origin.file === file && r.origin.line === 1));
}

/** rollout-<time>-<thread id>.jsonl */
const ROLLOUT_NAME = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** A thread from its rollout's records (one file's, in order): identity from its first session_meta. */
export function threadOfRecords(records: RolloutRecord[], file: string, damaged = false): CodexThread {
  const metas = records.filter((r) => r.record.type === 'session_meta');
  // Its session_meta cut away (a damaged first line): the thread id is in the file's name, the rest is what is intact.
  const named = damaged && metas.length === 0 ? ROLLOUT_NAME.exec(basename(file))?.[1] : undefined;
  if (metas.length === 0 && !named) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}: no session_meta record; not a Codex rollout`);
  if (named) return { threadId: named, sessionId: named, parentThreadId: null, depth: 0, nickname: null, file, records, own: records, meta: { id: named } };
  const meta = metas[0]!.record.payload as Json;
  const start = typeof meta.subagent_history_start_ordinal === 'number' ? meta.subagent_history_start_ordinal : null;
  const own =
    start === null
      ? records
      : records.filter((r, i) => i === records.indexOf(metas[0]!) || (typeof r.record.ordinal === 'number' ? r.record.ordinal >= start : true));
  const spawn = meta.source?.subagent?.thread_spawn as Json | undefined;
  return {
    threadId: meta.id,
    sessionId: typeof meta.session_id === 'string' ? meta.session_id : meta.id,
    parentThreadId: typeof meta.parent_thread_id === 'string' ? meta.parent_thread_id : typeof spawn?.parent_thread_id === 'string' ? spawn.parent_thread_id : null,
    depth: typeof spawn?.depth === 'number' ? spawn.depth : 0,
    nickname: typeof meta.agent_nickname === 'string' ? meta.agent_nickname : null,
    file,
    records,
    own,
    meta,
  };
}

/**
 * The threads of a roller trace.jsonl for Codex (every thread's rollout, root first, each starting with its
 * own session_meta). A session_meta opens a new thread only with an id not seen before: a warm fork replays
 * its parent's session_meta inside its own file, and that replay stays in the fork's records.
 */
export function threadsOfTrace(lines: readonly Json[], file = 'trace.jsonl'): CodexThread[] {
  const groups: RolloutRecord[][] = [];
  const seen = new Set<string>();
  let legacy = false;
  lines.forEach((line, i) => {
    // Each thread's rollout starts over: a pre-0.34 header line opens a legacy one.
    if (isLegacyHeader(line)) legacy = true;
    else if (line.type === 'session_meta') legacy = false;
    const record = asRecord(line, legacy);
    const id = record.type === 'session_meta' ? (record.payload as Json | undefined)?.id : undefined;
    if (typeof id === 'string' && !seen.has(id)) {
      seen.add(id);
      groups.push([]);
    }
    groups[groups.length - 1]?.push(record === line ? { record, file, line: i + 1 } : { record, raw: line, file, line: i + 1 });
  });
  const threads = groups.map((g) => threadOfRecords(g, file));
  markForkReplays(threads);
  return threads;
}

/**
 * A warm fork of a release that writes no subagent_history_start_ordinal (multi_agent v2 in 0.120 to 0.140) still
 * replays its parent's history after a second session_meta (the parent's, its id the fork's forked_from_id): that
 * prefix ends where the fork's own first turn starts — the first task_started whose turn id is none of the parent's
 * turns. Found from the parent's own rollout; without it the boundary is unknown and `replayUnknown` says so.
 */
export function markForkReplays(threads: CodexThread[]): void {
  const byId = new Map(threads.map((t) => [t.threadId, t]));
  for (const t of threads) {
    const from = t.meta.forked_from_id;
    if (typeof from !== 'string' || typeof t.meta.subagent_history_start_ordinal === 'number' || t.own !== t.records) continue;
    const replayAt = t.records.findIndex((r, i) => i > 0 && r.record.type === 'session_meta' && r.record.payload?.id === from);
    if (replayAt === -1) continue;
    const parent = byId.get(from);
    if (!parent) {
      t.replayUnknown = `its file replays thread ${from}'s history from line ${t.records[replayAt]!.line}, and that thread's rollout was not read: where the replay ends is unknown`;
      continue;
    }
    const parentTurns = new Set(parent.own.filter((r) => r.record.type === 'event_msg' && r.record.payload?.type === 'task_started').map((r) => r.record.payload.turn_id));
    const ownStart = t.records.findIndex((r, i) => i > replayAt && r.record.type === 'event_msg' && r.record.payload?.type === 'task_started' && !parentTurns.has(r.record.payload.turn_id));
    if (ownStart === -1) continue;
    t.own = [t.records[0]!, ...t.records.slice(ownStart)];
  }
}
