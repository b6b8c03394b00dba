import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../native-capture.js';
import { isCompletedAssistant, openCodeParticipants } from './participants.js';
import type { OpenCodeStore } from './store.js';

/** OpenCode's title requests: they offer no tools and write no assistant message (their tokens are in no message). */
export const OPENCODE_TITLE_CALL = {
  rule: 'OpenCode title requests (they offer no tools and write no assistant message)',
  test: (c: Call) => !Array.isArray((c.context as { tools?: unknown } | null)?.tools),
};

/**
 * OpenCode's NativeCapture: calls join sessions by the x-session-id header it sends on every request (the
 * proxy records it as native_identity.session_id); its store keeps no response ids, so coverage is the
 * weaker count — completed assistant messages per session against the calls that can make one (requests
 * that offer tools: the title agent's do not, and write no message).
 */
export function openCodeNativeCapture(store: OpenCodeStore, version: string): NativeCapture {
  const participants = openCodeParticipants(store);
  const counts: Record<string, number> = {};
  for (const p of participants) counts[p.participant] = store.messages.filter((m) => m.sessionId === p.native_id && isCompletedAssistant(m)).length;
  return {
    harness: { name: 'opencode', version },
    participants,
    capabilities: { native_output_coverage: 'count', delegation: 'native', background: false },
    outputs: {
      method: 'count',
      counts,
      counted: { rule: 'requests that offer tools (OpenCode title requests offer none and write no assistant message)', test: (c: Call) => !OPENCODE_TITLE_CALL.test(c) },
    },
    headerJoin: { field: 'session_id', participants: Object.fromEntries(participants.map((p) => [p.native_id, p.participant])) },
    // Releases before 1.17 send no session header: with one session, the calls through this capture's own proxy are its.
    ...(participants.length === 1
      ? { soleParticipant: { participant: participants[0]!.participant, evidence: "the call went through this run's own proxy and the OpenCode run has one session (releases before 1.17 send no session header)" } }
      : {}),
    nativeFiles: store.files ?? [store.path],
  };
}
