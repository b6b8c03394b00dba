import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { OpenCodeMessage, OpenCodePart, OpenCodeSession, OpenCodeStore } from './store.js';

type Json = Record<string, any>;

/**
 * OpenCode before its SQLite store (releases up to 1.1.x) kept one JSON file per object under
 * `$XDG_DATA_HOME/opencode/storage`: session/<projectID>/<sessionID>.json, message/<sessionID>/<messageID>.json and
 * part/<messageID>/<partID>.json — the same objects as the later rows' data, with their ids inside. Read as the CLI
 * read them: parts of a message in id order (ids ascend with time); parts carry no time of their own, so they take
 * their message's. Only regular files and directories are read (a link is never followed).
 */
export function readOpenCodeJsonStore(storageDir: string): OpenCodeStore {
  const files: string[] = [];
  const objects = (kind: 'session' | 'message' | 'part'): { file: string; data: Json }[] => {
    const out: { file: string; data: Json }[] = [];
    for (const group of entries(join(storageDir, kind)).filter((e) => e.isDirectory())) {
      const dir = join(storageDir, kind, group.name);
      for (const e of entries(dir)) {
        if (!e.isFile() || !e.name.endsWith('.json')) continue;
        const file = join(dir, e.name);
        files.push(file);
        out.push({ file, data: parseObject(file) });
      }
    }
    return out;
  };
  const sessions: OpenCodeSession[] = objects('session').map(({ file, data }) => ({
    id: idOf(data, file),
    parentId: typeof data.parentID === 'string' ? data.parentID : null,
    agent: null,
    title: typeof data.title === 'string' ? data.title : null,
    timeCreated: Number(data.time?.created ?? 0),
    row: data,
  }));
  const messages: OpenCodeMessage[] = objects('message').map(({ file, data }) => ({
    id: idOf(data, file),
    sessionId: String(data.sessionID),
    timeCreated: Number(data.time?.created ?? 0),
    data,
  }));
  const messageTime = new Map(messages.map((m) => [m.id, m.timeCreated]));
  const parts: OpenCodePart[] = objects('part').map(({ file, data }) => ({
    id: idOf(data, file),
    messageId: String(data.messageID),
    sessionId: String(data.sessionID),
    timeCreated: messageTime.get(String(data.messageID)) ?? 0,
    data,
  }));
  const byTimeThenId = (a: { timeCreated: number; id: string }, b: { timeCreated: number; id: string }) => a.timeCreated - b.timeCreated || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  sessions.sort(byTimeThenId);
  messages.sort(byTimeThenId);
  parts.sort(byTimeThenId);
  return { path: storageDir, sessions, messages, parts, files: files.sort() };
}

function entries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

function parseObject(file: string): Json {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}: not a JSON object (${(err as Error).message}); was OpenCode stopped while writing it? The rest of the storage is intact: remove or restore this file to convert the others`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}: holds ${JSON.stringify(data)?.slice(0, 40)}, not an OpenCode storage object`);
  return data as Json;
}

function idOf(data: Json, file: string): string {
  if (typeof data.id !== 'string' || data.id === '') throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}: an OpenCode storage object without an id`);
  return data.id;
}
