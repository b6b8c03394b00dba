import type { SpawnWithoutParticipant } from '../../schemas/participant-usage.js';
import type { NativeRecord, NativeSession } from './native-session.js';

type Json = Record<string, any>;

/** The sub-agent tool on the wire (Agent) and its SDK-facing alias in older releases (Task). */
const SPAWN_TOOLS = new Set(['Agent', 'Task']);

/**
 * Spawn calls the CLI refused (seeds/004: an unknown agent type, a spawn not allowed): their tool_result is an error
 * and no sub-agent ran, so no participant stands for them — listed with the CLI's own words, never dropped.
 */
export function claudeCodeRefusedSpawns(session: NativeSession): SpawnWithoutParticipant[] {
  const threads: { participant: string; records: NativeRecord[] }[] = [
    { participant: `session:${session.sessionId}`, records: session.main },
    ...session.subagents.map((s) => ({ participant: `agent:${s.agentId}`, records: s.records })),
  ];
  const out: SpawnWithoutParticipant[] = [];
  for (const t of threads) {
    const spawns = new Set<string>();
    for (const r of t.records) {
      if (r.record.type !== 'assistant' || !Array.isArray(r.record.message?.content)) continue;
      for (const b of r.record.message.content as Json[]) if (b.type === 'tool_use' && SPAWN_TOOLS.has(b.name) && typeof b.id === 'string') spawns.add(b.id);
    }
    for (const r of t.records) {
      if (r.record.type !== 'user' || !Array.isArray(r.record.message?.content)) continue;
      for (const b of r.record.message.content as Json[]) {
        if (b.type !== 'tool_result' || b.is_error !== true || !spawns.has(b.tool_use_id) || typeof r.record.toolUseResult?.agentId === 'string') continue;
        const text = typeof b.content === 'string' ? b.content : JSON.stringify(b.content ?? null);
        out.push({ participant: t.participant, tool_call_id: b.tool_use_id, target: null, status: 'failed', reason: `the CLI refused the spawn: ${text.slice(0, 300)}`, source: `${r.file}:${r.line}` });
      }
    }
  }
  return out;
}
