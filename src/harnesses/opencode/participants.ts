import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';
import { sessionVersion, wireOutput } from './tokens.js';
import type { OpenCodeStore } from './store.js';

const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/** A completed assistant message: one model call that ended (OpenCode writes one per step). */
export function isCompletedAssistant(m: { data: Record<string, any> }): boolean {
  return m.data.role === 'assistant' && typeof m.data.time?.completed === 'number';
}

/**
 * One participant per session: the root (no parent_id) and each child session a `task` tool call made (its
 * tool part's metadata.sessionId names the child, its callID is the spawning tool call). Tokens are the
 * assistant messages' own (input as the server reported prompt tokens, cache reads and writes apart);
 * status from the last assistant message's finish.
 */
export function openCodeParticipants(store: OpenCodeStore): ParticipantUsage[] {
  const spawnOf = new Map<string, { callId: string; part: string }>();
  for (const p of store.parts) {
    const meta = p.data.state?.metadata as { sessionId?: unknown } | undefined;
    if (p.data.type === 'tool' && p.data.tool === 'task' && typeof meta?.sessionId === 'string') spawnOf.set(meta.sessionId, { callId: String(p.data.callID), part: p.id });
  }
  const depthOf = (id: string, seen = new Set<string>()): number => {
    const s = store.sessions.find((x) => x.id === id);
    if (!s?.parentId || seen.has(id)) return 0;
    seen.add(id);
    return 1 + depthOf(s.parentId, seen);
  };
  return store.sessions.map((s) => {
    const assistants = store.messages.filter((m) => m.sessionId === s.id && isCompletedAssistant(m));
    const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
    const version = sessionVersion(s.row);
    let outputUnknown = 0;
    for (const m of assistants) {
      const t = m.data.tokens ?? {};
      tokens.input += n(t.input);
      // Output here includes reasoning, as the wire and every other harness count it; what the release stored differs.
      const output = wireOutput(t, version);
      if (output === null) outputUnknown += 1;
      tokens.output += output ?? n(t.output);
      tokens.reasoning += n(t.reasoning);
      tokens.cache_read += n(t.cache?.read);
      tokens.cache_creation += n(t.cache?.write);
    }
    const last = assistants.at(-1);
    const costs = assistants.map((m) => m.data.cost).filter((c): c is number => typeof c === 'number');
    const status: ParticipantUsage['status'] = !last ? 'unknown' : last.data.finish === 'stop' ? 'completed' : last.data.error ? 'failed' : 'unknown';
    const spawn = spawnOf.get(s.id);
    return {
      participant: `session:${s.id}`,
      role: s.parentId ? 'child' : 'root',
      native_id: s.id,
      parent: s.parentId ? `session:${s.parentId}` : null,
      spawn_tool_call_id: spawn?.callId ?? null,
      depth: depthOf(s.id),
      tokens,
      ...(outputUnknown > 0
        ? { unknown_kinds: ['output' as const], tokens_note: `${outputUnknown} message(s) reasoned and the session names no release: whether their stored output holds the reasoning (up to 1.3.2) or not (from 1.14.34) is unknown, not guessed` }
        : {}),
      messages: assistants.length,
      message_ids: assistants.map((m) => m.id),
      status,
      status_source: last ? `${store.path}: message ${last.id} (finish ${String(last.data.finish ?? 'none')})` : `${store.path}: session ${s.id} has no completed assistant message`,
      cost_usd: costs.length > 0 && costs.some((c) => c > 0) ? costs.reduce((a, b) => a + b, 0) : null,
      cost_note: costs.length > 0 && costs.every((c) => c === 0) ? 'OpenCode reports 0 where no pricing is configured' : null,
      reason: null,
      ...(s.parentId ? { spawn_result: 'result' as const } : { spawn_result: null }),
    };
  });
}
