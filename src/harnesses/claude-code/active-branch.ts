import type { NativeRecord } from './native-session.js';
import { addTo } from '../../core/multimap.js';

type Json = Record<string, any>;

/** A turn the user typed (or the harness sent as a user turn), not a tool result. */
function isUserTurn(rec: Json): boolean {
  if (rec.type !== 'user') return false;
  const c = rec.message?.content;
  return typeof c === 'string' || (Array.isArray(c) && !c.some((b: Json) => b.type === 'tool_result'));
}

/**
 * The records of the conversation minus rewound branches. A rewind leaves a second user turn under the
 * same parent; the branches under the earlier turns are dead (only the last one continued). Other forks
 * in the parentUuid tree are not rewinds — parallel tool calls fork too (each result hangs off its own
 * tool_use record) — and are kept. When nothing was rewound the list is returned as it is.
 */
export function activeBranch(records: readonly NativeRecord[]): readonly NativeRecord[] {
  const children = new Map<string, NativeRecord[]>();
  for (const r of records) {
    const parent = r.record.parentUuid;
    if (typeof r.record.uuid !== 'string' || typeof parent !== 'string' || r.record.isSidechain === true) continue;
    addTo(children, parent, r);
  }
  const dead = new Set<string>();
  for (const kids of children.values()) {
    const turns = kids.filter((k) => isUserTurn(k.record));
    if (turns.length < 2) continue;
    const stack = turns.slice(0, -1).map((k) => k.record.uuid as string);
    while (stack.length > 0) {
      const uuid = stack.pop()!;
      if (dead.has(uuid)) continue;
      dead.add(uuid);
      for (const k of children.get(uuid) ?? []) stack.push(k.record.uuid as string);
    }
  }
  return dead.size === 0 ? records : records.filter((r) => typeof r.record.uuid !== 'string' || !dead.has(r.record.uuid));
}
