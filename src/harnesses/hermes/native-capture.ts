import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { HermesData } from './store.js';

/** Hermes's model calls: Chat Completions requests that offer tools (its probes of /models and /api/show ask nothing). */
const MODEL_CALL = {
  rule: 'Chat Completions requests that offer tools (each writes one assistant message)',
  test: (c: Call) => c.protocol === 'openai-chat-completions' && Array.isArray((c.context as { tools?: unknown } | null)?.tools),
};

/**
 * Hermes's NativeCapture (docs/harness-notes/hermes.md): its state.db keeps no provider response id and Hermes sends
 * no session header of its own, so roller's plugin adds one (x-roller-session-id: the agent's session id, removed by
 * the proxy). Without it (a capture of another's, a plugin that did not load), every message row still keeps the
 * tool-call ids the model emitted (assistant tool_calls) and answered (tool rows): calls join participants by those
 * ids; a sample of one participant needs neither (its calls are the ones through its own proxy). Coverage counts each participant's assistant messages against its calls. `where`: the
 * store as the evidence names it (relative to the native root: the same words live and reprocessed).
 */
export function hermesNativeCapture(data: HermesData, participants: ParticipantUsage[], ownerOf: ReadonlyMap<string, string>, version: string, where: string): NativeCapture {
  const ids = new Set(participants.map((p) => p.native_id));
  const owners: Record<string, string> = {};
  const counts: Record<string, number> = Object.fromEntries(participants.map((p) => [p.participant, 0]));
  for (const m of data.messages) {
    const owner = ownerOf.get(m.session_id);
    if (!owner || !ids.has(owner)) continue;
    const participant = `session:${owner}`;
    if (m.role === 'assistant') counts[participant] = (counts[participant] ?? 0) + 1;
    for (const call of m.tool_calls) if (typeof call.id === 'string') owners[call.id] = participant;
    if (m.role === 'tool' && m.tool_call_id) owners[m.tool_call_id] = participant;
  }
  return {
    harness: { name: 'hermes', version },
    participants,
    capabilities: { native_output_coverage: 'count', delegation: 'native', background: false },
    outputs: { method: 'count', counts, counted: MODEL_CALL },
    // roller's plugin names each agent's session on its requests (launch.ts); a compressed session's continuation is
    // its participant's still.
    headerJoin: { field: 'session_id', participants: Object.fromEntries(data.sessions.filter((x) => ids.has(ownerOf.get(x.id) ?? '')).map((x) => [x.id, `session:${ownerOf.get(x.id)}`])) },
    toolCallJoin: { owners, source: `${where} (messages: tool_calls, tool_call_id)` },
    ...(participants.length === 1 ? { soleParticipant: { participant: participants[0]!.participant, evidence: "the sample's one Hermes session: every model call through its own proxy is that session's" } } : {}),
    nativeFiles: [data.source],
  };
}
