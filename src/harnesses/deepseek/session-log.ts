import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Decompress } from 'fzstd';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { excerpt, type Rejected } from '../../core/rejected.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { DeepSeekEvent } from '../../schemas/harness-events.js';
import { checkValue } from '../../schemas/validate.js';

type Json = Record<string, any>;

/** The header line every dsh session log opens with (dsh-session-persistence-jsonl). */
export interface DshSessionHeader {
  type: 'session';
  version: number;
  id: string;
  createdAt: number;
  cwd: string;
  /** A sub-agent's log names the session that started it. */
  parentSession?: string;
  origin?: string;
  delegationDepth?: number;
}

/** One `seq`-numbered event of a dsh session log, as written. */
export interface DshEvent {
  type: string;
  seq: number;
  time: number;
  data: Json;
  [key: string]: unknown;
}

export interface DshSession {
  /** The log file (session.jsonl.zstd, or session.jsonl where a log was kept uncompressed). */
  file: string;
  header: DshSessionHeader;
  events: DshEvent[];
  /** The header and the events, every line as written: the session's part of trace.jsonl. */
  lines: Json[];
  /** Lines that could not be read (a process killed mid-write), kept as data. */
  rejects: Rejected[];
}

const LOG_NAMES = new Set(['session.jsonl.zstd', 'session.jsonl']);

/** A `seq`-numbered event (batched chunk lines, numbered from seq0, are kept in `lines` only). */
const isEvent = (l: Json): l is DshEvent => typeof l.type === 'string' && typeof l.seq === 'number' && typeof l.data === 'object' && l.data !== null;

/** A sub-agent's `subagent/descriptor` (provider, mode, label), absent in a root's log. */
export const descriptorOf = (s: Pick<DshSession, 'events'>): Json | undefined => s.events.find((e) => e.type === 'subagent/descriptor')?.data;

/** Every dsh session log under `root` ($HOME/.dsh/sessions, or an archive's copy of it); links are not followed. */
export function findDshLogs(root: string): string[] {
  const st = lstatSync(root, { throwIfNoEntry: false });
  if (!st) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${root} not found: give a dsh HOME, its .dsh/sessions directory or one session.jsonl.zstd`);
  if (st.isFile()) return [root];
  const found: string[] = [];
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && LOG_NAMES.has(e.name)) found.push(join(e.parentPath, e.name));
  }
  // One log per session directory: the compressed one when both are there.
  const byDir = new Map<string, string>();
  for (const f of found.sort()) if (!byDir.has(dirname(f)) || f.endsWith('.zstd')) byDir.set(dirname(f), f);
  return [...byDir.values()].sort();
}

/** The text of a log: zstd frames decoded as far as they go (a frame cut by a kill leaves what came before it). */
function logText(file: string): { text: string; cut: string | null } {
  const bytes = readFileSync(file);
  if (!file.endsWith('.zstd')) return { text: bytes.toString('utf8'), cut: null };
  const chunks: Uint8Array[] = [];
  const stream = new Decompress((chunk) => chunks.push(chunk));
  let cut: string | null = null;
  try {
    stream.push(bytes, true);
  } catch (err) {
    cut = `the zstd stream ends early (${(err as Error).message})`;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut };
}

/**
 * One dsh session log: its header (line 1) and events. A line that is not JSON is a reject (the last one, cut by a
 * kill, is expected); a log without its header line is not a dsh session log and says so.
 */
export function readDshSession(file: string): DshSession {
  const { text, cut } = logText(file);
  const rejects: Rejected[] = [];
  const lines: Json[] = [];
  const raw = text.split('\n');
  raw.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      lines.push(JSON.parse(line) as Json);
    } catch {
      rejects.push({
        stage: 'deepseek-session',
        code: ErrorCode.JSONL_INVALID_JSON,
        reason: i === raw.length - 1 ? 'the last line is cut (the process stopped while writing it)' : 'not JSON',
        origin: { file, line: i + 1 },
        excerpt: excerpt(line),
      });
    }
  });
  if (cut) rejects.push({ stage: 'deepseek-session', code: ErrorCode.JSONL_INVALID_JSON, reason: cut, origin: { file, line: raw.length } });
  const header = lines[0];
  const issues = header?.type === 'session' ? checkValue(DeepSeekEvent, header) : [];
  if (header?.type !== 'session' || issues.length > 0) {
    const why = issues.map((x) => `${formatJsonPath(x.path)}: ${x.message}`).join('; ');
    throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:1: not a dsh session log (its first line must be the {"type":"session","id":…} header${why ? `; ${why}` : ''})`, { origin: { file, line: 1 } });
  }
  const events = lines.slice(1).filter(isEvent);
  return { file, header: header as DshSessionHeader, events, lines, rejects };
}

/** Every session under `root`, each once by id (a copy of a log elsewhere in the tree is the same session). */
export function readDshSessions(root: string): DshSession[] {
  const files = findDshLogs(root);
  if (files.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no dsh session log (session.jsonl.zstd) under ${root}: did dsh run with HOME there?`);
  const byId = new Map<string, DshSession>();
  for (const f of files) {
    const s = readDshSession(f);
    const seen = byId.get(s.header.id);
    if (seen) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${f} and ${seen.file} both hold session ${s.header.id}: give one session tree`);
    byId.set(s.header.id, s);
  }
  return [...byId.values()];
}

/** The sessions below `rootId` (children, grandchildren, …) by their headers' parentSession, root first. */
export function sessionTree(sessions: readonly DshSession[], rootId: string): DshSession[] {
  const out = sessions.filter((s) => s.header.id === rootId);
  for (let i = 0; i < out.length; i++) for (const s of sessions) if (s.header.parentSession === out[i]!.header.id && !out.includes(s)) out.push(s);
  return out;
}

/** The records of trace.jsonl back into sessions: each session's header line opens its lines. */
export function sessionsOfTrace(records: readonly Json[], where = 'trace.jsonl'): DshSession[] {
  const out: DshSession[] = [];
  for (const r of records) {
    if (r.type === 'session' && typeof r.id === 'string') out.push({ file: where, header: r as DshSessionHeader, events: [], lines: [r], rejects: [] });
    else if (out.length > 0) {
      const s = out.at(-1)!;
      s.lines.push(r);
      if (isEvent(r)) s.events.push(r);
    }
  }
  return out;
}
