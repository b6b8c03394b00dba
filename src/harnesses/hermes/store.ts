import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openReadonlySqlite } from '../../core/sqlite.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { HERMES_EVENTS_SCHEMA, HermesEvent, HermesMessageRow, HermesSessionRow } from '../../schemas/harness-events.js';
import { checkValue } from '../../schemas/validate.js';

/** The Hermes state.db schema roller reads (NousResearch/hermes-agent; not installable here: from its sources). */
export const HERMES_VERIFIED_SHAPES = ['state.db sessions/messages (reference/fixtures/SOURCES.md)'] as const;

type Json = Record<string, any>;
export interface HermesSession {
  id: string;
  source: string;
  model?: string | null;
  parent_session_id?: string | null;
  started_at: number;
  ended_at?: number | null;
  end_reason?: string | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_tokens?: number | null;
  cache_write_tokens?: number | null;
  reasoning_tokens?: number | null;
  estimated_cost_usd?: number | null;
  system_prompt?: string | null;
  [k: string]: unknown;
}
export interface HermesMessage {
  id: number;
  session_id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls: Json[];
  tool_call_id?: string | null;
  tool_name?: string | null;
  reasoning?: string | null;
  reasoning_content?: string | null;
  finish_reason?: string | null;
  timestamp: number;
  active?: number;
}

export interface HermesData {
  source: string;
  sessions: HermesSession[];
  /** Active messages only (active = 0 rows were superseded), by session, in id order. */
  messages: HermesMessage[];
  /** state.db's schema_version (null: not a state.db, or it names none). */
  schemaVersion?: number | null;
}

function check<T>(schema: { parse(v: unknown): T }, zodSchema: Parameters<typeof checkValue>[0], value: unknown, where: string): T {
  const issues = checkValue(zodSchema, value);
  if (issues.length > 0) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${where}: ${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')} (roller reads ${HERMES_VERIFIED_SHAPES.join(', ')})`);
  return schema.parse(value);
}

const toolCallsOf = (v: unknown, where: string): Json[] => {
  if (v === null || v === undefined || v === '') return [];
  if (Array.isArray(v)) return v as Json[];
  try {
    const parsed: unknown = JSON.parse(String(v));
    return Array.isArray(parsed) ? (parsed as Json[]) : [];
  } catch {
    throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${where}: tool_calls is not JSON`);
  }
};

/** The store a path names: a state.db or events file as given, or a HERMES_HOME (~/.hermes) holding state.db. */
export function hermesStore(path: string): string {
  if (!existsSync(path)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: no such Hermes store (a ~/.hermes directory, its state.db, or a roller.hermes-events/v1 file)`);
  if (!statSync(path).isDirectory()) return path;
  const db = join(path, 'state.db');
  if (!existsSync(db)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: no state.db in this Hermes home (Hermes wrote no session here)`);
  return db;
}

/** From a state.db (read with SQLite) or a roller.hermes-events/v1 file. */
export function readHermes(path: string): HermesData {
  const sessions: HermesSession[] = [];
  const rows: { row: Json; where: string }[] = [];
  let schemaVersion: number | null = null;
  if (path.endsWith('.jsonl')) {
    readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `${path}:${i + 1}`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new RollerError(ErrorCode.JSONL_INVALID_JSON, `${where}: not JSON`);
      }
      const e = check(HermesEvent, HermesEvent, value, where);
      if (e.kind === 'session') sessions.push(e.session as HermesSession);
      else rows.push({ row: e.message, where });
    });
  } else {
    const db = openReadonlySqlite(path);
    try {
      const version = (db.prepare("select name from sqlite_master where type = 'table' and name = 'schema_version'").get() ? (db.prepare('select * from schema_version').get() as Json | undefined) : undefined) ?? {};
      const v = Object.values(version)[0];
      schemaVersion = typeof v === 'number' ? v : null;
      for (const r of db.prepare('select * from sessions order by started_at, id').all() as Json[]) sessions.push(check(HermesSessionRow, HermesSessionRow, r, `${path}: sessions ${r.id}`) as HermesSession);
      for (const r of db.prepare('select * from messages order by id').all() as Json[]) rows.push({ row: r, where: `${path}: messages ${r.id}` });
    } catch (err) {
      if (err instanceof RollerError) throw err;
      throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${path}: not a Hermes state.db (${(err as Error).message})`);
    } finally {
      db.close();
    }
  }
  const messages = rows
    .map(({ row, where }) => ({ ...(check(HermesMessageRow, HermesMessageRow, row, where) as Omit<HermesMessage, 'tool_calls'>), tool_calls: toolCallsOf(row.tool_calls, where) }))
    .filter((m) => m.active !== 0)
    .sort((a, b) => a.id - b.id);
  return { source: path, sessions, messages, schemaVersion };
}

/** The data of roller.hermes-events/v1 records already parsed (a sample's trace.jsonl, as ATIF export reads it). */
export function hermesDataOfEvents(records: readonly unknown[], source: string): HermesData {
  const sessions: HermesSession[] = [];
  const messages: HermesMessage[] = [];
  records.forEach((value, i) => {
    const where = `${source}: record ${i + 1}`;
    const e = check(HermesEvent, HermesEvent, value, where);
    if (e.kind === 'session') sessions.push(e.session as HermesSession);
    else {
      const row = e.message as Json;
      messages.push({ ...(check(HermesMessageRow, HermesMessageRow, row, where) as Omit<HermesMessage, 'tool_calls'>), tool_calls: toolCallsOf(row.tool_calls, where) });
    }
  });
  return { source, sessions, messages: messages.filter((m) => m.active !== 0).sort((a, b) => a.id - b.id) };
}

/** The data as roller.hermes-events/v1 lines (trace.jsonl): sessions first, then messages in id order. */
export function* hermesEvents(data: HermesData, sessionIds: ReadonlySet<string>): Generator<Json> {
  for (const s of data.sessions) if (sessionIds.has(s.id)) yield { schema: HERMES_EVENTS_SCHEMA, kind: 'session', session: s };
  for (const m of data.messages) if (sessionIds.has(m.session_id)) yield { schema: HERMES_EVENTS_SCHEMA, kind: 'message', message: m };
}
