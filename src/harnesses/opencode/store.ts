import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { openReadonlySqlite } from '../../core/sqlite.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { readOpenCodeJsonStore } from './store-json.js';

/** OpenCode keeps sessions in SQLite (WAL mode) since 1.2: $XDG_DATA_HOME/opencode/opencode.db; before, JSON files (store-json.ts). */
export const OPENCODE_VERIFIED_VERSIONS = ['1.1.11 to 1.18.33 (docs/VERSIONS.md)'] as const;
export const OPENCODE_RAW_SCHEMA = 'roller.opencode-events/v1' as const;

type Json = Record<string, any>;

export interface OpenCodeSession {
  id: string;
  parentId: string | null;
  agent: string | null;
  title: string | null;
  timeCreated: number;
  row: Json;
}

export interface OpenCodeMessage {
  id: string;
  sessionId: string;
  timeCreated: number;
  data: Json;
}

export interface OpenCodePart {
  id: string;
  messageId: string;
  sessionId: string;
  timeCreated: number;
  data: Json;
}

export interface OpenCodeStore {
  /** The database, or the JSON storage directory. */
  path: string;
  /** The JSON files read (JSON storage only; a database is its one file). */
  files?: string[];
  sessions: OpenCodeSession[];
  messages: OpenCodeMessage[];
  parts: OpenCodePart[];
}

/**
 * The store under an OpenCode HOME (or XDG data dir, or the path itself): its opencode.db, or failing that the JSON
 * storage directory of a release before 1.2 (one with a session/ directory).
 */
export function readOpenCodeStoreAt(native: string): OpenCodeStore {
  const dataDirs = [native, join(native, 'opencode'), join(native, '.local', 'share', 'opencode')];
  if (native.endsWith('.db') && existsSync(native)) return readOpenCodeStore(native);
  for (const d of dataDirs) if (existsSync(join(d, 'opencode.db'))) return readOpenCodeStore(join(d, 'opencode.db'));
  for (const d of [native, ...dataDirs.map((x) => join(x, 'storage'))]) {
    if (isDir(join(d, 'session'))) {
      const store = readOpenCodeJsonStore(d);
      checkShapes(d, store.sessions, store.messages, store.parts);
      return store;
    }
  }
  throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no OpenCode store under ${native} (neither opencode.db nor a storage/session directory): pass an OpenCode HOME, its XDG data dir, the .db file or the storage directory`);
}

const isDir = (p: string) => existsSync(p) && lstatSync(p).isDirectory();

const parse = (text: string, where: string): Json => {
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${where}: the data column is not JSON; is this an OpenCode ${OPENCODE_VERIFIED_VERSIONS.join('/')} database?`);
  }
};

/**
 * Sessions, messages and parts, read with SQLite (never by parsing the file: most of a live database is in
 * its -wal file). Opened read-only; rows in creation order.
 */
export function readOpenCodeStore(dbPath: string): OpenCodeStore {
  const db = openReadonlySqlite(dbPath);
  try {
    const tables = new Set((db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((t) => t.name));
    for (const t of ['session', 'message', 'part']) {
      if (!tables.has(t)) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${dbPath}: no '${t}' table; roller reads the OpenCode ${OPENCODE_VERIFIED_VERSIONS.join('/')} schema`);
    }
    const sessions = (db.prepare('select * from session order by time_created, id').all() as Json[]).map((r) => ({
      id: String(r.id),
      parentId: r.parent_id === null || r.parent_id === undefined ? null : String(r.parent_id),
      agent: r.agent ?? null,
      title: r.title ?? null,
      timeCreated: Number(r.time_created),
      row: r,
    }));
    const messages = (db.prepare('select id, session_id, time_created, data from message order by time_created, id').all() as Json[]).map((r) => ({
      id: String(r.id),
      sessionId: String(r.session_id),
      timeCreated: Number(r.time_created),
      data: parse(String(r.data), `${dbPath}: message ${r.id}`),
    }));
    const parts = (db.prepare('select id, message_id, session_id, time_created, data from part order by time_created, id').all() as Json[]).map((r) => ({
      id: String(r.id),
      messageId: String(r.message_id),
      sessionId: String(r.session_id),
      timeCreated: Number(r.time_created),
      data: parse(String(r.data), `${dbPath}: part ${r.id}`),
    }));
    checkShapes(dbPath, sessions, messages, parts);
    return { path: dbPath, sessions, messages, parts };
  } finally {
    db.close();
  }
}

/**
 * Part types the releases of the version matrix wrote, and the rest of OpenCode's part union (message-v2: file,
 * subtask, snapshot, patch, agent, retry, compaction); a message role or part type outside them is refused, loudly:
 * it may carry what this reader would miss.
 */
const KNOWN_PARTS = new Set(['text', 'reasoning', 'tool', 'step-start', 'step-finish', 'file', 'subtask', 'snapshot', 'patch', 'agent', 'retry', 'compaction']);

function checkShapes(dbPath: string, sessions: OpenCodeSession[], messages: OpenCodeMessage[], parts: OpenCodePart[]): void {
  const versionOf = new Map(sessions.map((x) => [x.id, typeof x.row.version === 'string' && x.row.version !== '' ? x.row.version : 'unknown (the session names none)']));
  const fail = (what: string, sessionId: string) => {
    throw new RollerError(
      ErrorCode.NATIVE_SHAPE_UNKNOWN,
      `${dbPath}: ${what} (written by OpenCode ${versionOf.get(sessionId) ?? 'unknown'}); roller reads the stores of OpenCode ${OPENCODE_VERIFIED_VERSIONS.join(', ')} and no release among them wrote this shape: run \`roller verify --harness opencode --versions <version> --record\` and teach the adapter, or report it with this database`,
    );
  };
  for (const m of messages) if (m.data.role !== 'user' && m.data.role !== 'assistant') fail(`message ${m.id} has role ${JSON.stringify(m.data.role)}`, m.sessionId);
  for (const p of parts) if (!KNOWN_PARTS.has(p.data.type)) fail(`part ${p.id} (message ${p.messageId}) is of type ${JSON.stringify(p.data.type)}, which no verified release wrote`, p.sessionId);
}
