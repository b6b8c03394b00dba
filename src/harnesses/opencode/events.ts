import { OPENCODE_RAW_SCHEMA, type OpenCodeStore } from './store.js';

/** One trace.jsonl record: a row of OpenCode's store as it was, with the table it came from. */
export interface OpenCodeEvent {
  schema: typeof OPENCODE_RAW_SCHEMA;
  table: 'session' | 'message' | 'part';
  id: string;
  session_id: string;
  message_id?: string;
  time_created: number;
  data: unknown;
}

/**
 * The raw trace of a session tree (seeds/003 §4.1): every session, message and part row of those sessions,
 * merged in creation order (OpenCode's ids are time-ordered too), never cleaned for training.
 */
export function* openCodeEvents(store: OpenCodeStore, sessions: ReadonlySet<string>): Generator<OpenCodeEvent> {
  const rows: OpenCodeEvent[] = [
    ...store.sessions.filter((s) => sessions.has(s.id)).map((s) => ({ schema: OPENCODE_RAW_SCHEMA, table: 'session' as const, id: s.id, session_id: s.id, time_created: s.timeCreated, data: s.row })),
    ...store.messages.filter((m) => sessions.has(m.sessionId)).map((m) => ({ schema: OPENCODE_RAW_SCHEMA, table: 'message' as const, id: m.id, session_id: m.sessionId, time_created: m.timeCreated, data: m.data })),
    ...store.parts.filter((p) => sessions.has(p.sessionId)).map((p) => ({ schema: OPENCODE_RAW_SCHEMA, table: 'part' as const, id: p.id, session_id: p.sessionId, message_id: p.messageId, time_created: p.timeCreated, data: p.data })),
  ];
  rows.sort((a, b) => a.time_created - b.time_created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  yield* rows;
}

/**
 * The store again from a trace.jsonl of these events (the rows as they were): what `roller export` reads, so a
 * run's session tree converts without the database.
 */
export function storeOfEvents(events: Iterable<OpenCodeEvent>, path = 'trace.jsonl'): OpenCodeStore {
  const store: OpenCodeStore = { path, sessions: [], messages: [], parts: [] };
  for (const e of events) {
    if (e.schema !== OPENCODE_RAW_SCHEMA) continue;
    const data = e.data as Record<string, any>;
    if (e.table === 'session') {
      // A row of the database names its parent parent_id; a JSON storage object (before 1.2), parentID.
      const parent = data.parent_id ?? data.parentID;
      store.sessions.push({ id: e.id, parentId: parent === null || parent === undefined ? null : String(parent), agent: data.agent ?? null, title: data.title ?? null, timeCreated: e.time_created, row: data });
    } else if (e.table === 'message') store.messages.push({ id: e.id, sessionId: e.session_id, timeCreated: e.time_created, data });
    else if (e.table === 'part') store.parts.push({ id: e.id, messageId: e.message_id ?? '', sessionId: e.session_id, timeCreated: e.time_created, data });
  }
  return store;
}
