import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import { isAssistantMessage, participantOf } from './participants.js';
import { descriptorOf, type DshSession } from './session-log.js';

/** dsh's title requests: the session-title plugin asks with no tools and writes no assistant message. */
export const DEEPSEEK_TITLE_CALL = {
  rule: 'dsh session-title requests (they offer no tools and write no assistant message)',
  test: (c: Call) => !Array.isArray((c.context as { tools?: unknown } | null)?.tools),
};

/**
 * DeepSeek's NativeCapture (seeds/000: identity by the runner session, coverage by completed assistants): every
 * request dsh sends names its session in x-deepseek-harness-session-id (recorded as native_identity.session_id, and
 * forwarded: it is dsh's own header to the DeepSeek API); its logs keep no provider response id, so coverage counts
 * each session's assistant messages against the calls that can write one (requests that offer tools).
 */
export function deepSeekNativeCapture(sessions: readonly DshSession[], participants: ParticipantUsage[], version: string): NativeCapture {
  const counts: Record<string, number> = {};
  for (const s of sessions) counts[participantOf(s.header.id)] = s.events.filter(isAssistantMessage).length;
  return {
    harness: { name: 'deepseek', version },
    participants,
    capabilities: { native_output_coverage: 'count', delegation: 'native', background: sessions.some((s) => descriptorOf(s)?.mode === 'continuable') },
    outputs: { method: 'count', counts, counted: { rule: 'requests that offer tools (dsh title requests offer none and write no assistant message)', test: (c: Call) => !DEEPSEEK_TITLE_CALL.test(c) } },
    headerJoin: { field: 'session_id', participants: Object.fromEntries(participants.map((p) => [p.native_id, p.participant])) },
    nativeFiles: sessions.map((s) => s.file),
  };
}
