import { readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import type { Rejected } from '../../core/rejected.js';
import { CODEX_VERIFIED_VERSIONS } from './launch.js';

type Json = Record<string, any>;

export const CODEX_RAW_SCHEMA = 'codex-session-jsonl';

const KNOWN = new Set(['session_meta', 'turn_context', 'world_state', 'response_item', 'event_msg', 'token_usage_record', 'inter_agent_communication_metadata']);

export interface RolloutRecord {
  record: Json;
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

function checkShape(rec: Json, file: string, line: number): void {
  const fail = (what: string) => {
    throw new RollerError(
      ErrorCode.NATIVE_SHAPE_UNKNOWN,
      `${file}:${line}: a '${rec.type}' record ${what}; this reader knows Codex ${CODEX_VERIFIED_VERSIONS.join(', ')} — update the adapter for this version`,
      { origin: { file, line } },
    );
  };
  if (!KNOWN.has(rec.type)) return; // unknown record types are kept as they are
  if (typeof rec.payload !== 'object' || rec.payload === null) fail('has no payload object');
  const p = rec.payload as Json;
  if (rec.type === 'session_meta' && typeof p.id !== 'string') fail('has no id');
  if (rec.type === 'response_item' && typeof p.type !== 'string') fail('has no payload.type');
  if (rec.type === 'token_usage_record' && (typeof p.response_id !== 'string' || typeof p.usage !== 'object')) fail('has no response_id or usage');
}

export async function readThread(path: string, root: string, rejects: Rejected[]): Promise<CodexThread> {
  const file = relative(root, path) || basename(path);
  const records: RolloutRecord[] = [];
  const ctx = createStageContext({ onReject: (r) => rejects.push(r) });
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject', name: file })(ctx)) {
    const rec = env.data as Json;
    if (typeof rec !== 'object' || rec === null || typeof rec.type !== 'string') {
      throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:${env.origin.line}: a line without a "type"; not a Codex rollout`, { origin: env.origin });
    }
    checkShape(rec, file, env.origin.line!);
    records.push({ record: rec, file, line: env.origin.line! });
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
  lines.forEach((record, i) => {
    const id = record.type === 'session_meta' ? (record.payload as Json | undefined)?.id : undefined;
    if (typeof id === 'string' && !seen.has(id)) {
      seen.add(id);
      groups.push([]);
    }
    groups[groups.length - 1]?.push({ record, file, line: i + 1 });
  });
  return groups.map((g) => threadOfRecords(g, file));
}
