import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';

type Json = Record<string, any>;

/**
 * roller's recorder events under a Pi native root (a HOME, or its agent dir), by session id, in the order written.
 * None when the recorder wrote nothing (a release without extensions, or a run made without roller). A last
 * line cut mid-write is left out; any other line that is not JSON is an error naming it.
 */
export function readPiEvents(native: string): Map<string, Json[]> {
  const bySession = new Map<string, Json[]>();
  const file = [join(native, '.pi', 'agent', 'roller-events.jsonl'), join(native, 'roller-events.jsonl')].find((f) => existsSync(f));
  if (!file) return bySession;
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let e: Json;
    try {
      e = JSON.parse(line) as Json;
    } catch (err) {
      if (i === lines.length - 1) return;
      throw new RollerError(ErrorCode.JSONL_INVALID_JSON, `${file}:${i + 1}: not JSON (${(err as Error).message})`, { origin: { file, line: i + 1 } });
    }
    if (typeof e.session_id !== 'string') return;
    const list = bySession.get(e.session_id) ?? [];
    list.push(e);
    bySession.set(e.session_id, list);
  });
  return bySession;
}
