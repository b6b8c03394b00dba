import type { HeaderJoin, NativeOutputs } from '../../harnesses/native-capture.js';
import type { ParticipantUsage } from '../../harnesses/claude-code/participants.js';
import type { Call } from '../../schemas/call.js';
import type { Coverage } from '../../schemas/manifest.js';
import { withCallFields } from '../../schemas/call-context.js';

/**
 * The coverage check of seeds/000: do the captured calls and the native outputs account for each other?
 * per_id checks every native output id against an attributed call; count compares each participant's
 * number of completed, attributed calls with the native count (weaker, and the result says so); none
 * records that nothing could be checked. Calls no participant claims are counted by attribution already.
 */
export function checkCoverage(calls: readonly Call[], participants: readonly ParticipantUsage[], outputs: NativeOutputs): Coverage {
  if (outputs.method === 'none') return { method: 'none', status: 'unverified', expected: 0, matched: 0, missing: [], detail: outputs.reason };
  if (outputs.method === 'per_id') {
    const seen = new Set(calls.filter((c) => c.identity_status === 'attributed' && c.response_id).map((c) => `${c.participant_id}\u0000${c.response_id}`));
    const expected = participants.flatMap((p) => p.message_ids.map((id) => ({ p: p.participant, id })));
    const missing = expected.filter((e) => !seen.has(`${e.p}\u0000${e.id}`)).map((e) => `${e.p}: ${e.id}`);
    return {
      method: 'per_id',
      status: missing.length === 0 ? 'verified' : 'mismatch',
      expected: expected.length,
      matched: expected.length - missing.length,
      missing,
      detail: missing.length === 0 ? 'every native output id is a captured call' : `${missing.length} native outputs have no captured call`,
    };
  }
  const missing: string[] = [];
  let expected = 0;
  let matched = 0;
  const counted = outputs.counted;
  const excluded = counted ? calls.filter((c) => !counted.test(c)).length : 0;
  for (const p of participants) {
    const want = outputs.counts[p.participant] ?? 0;
    const got = calls.filter((c) => c.participant_id === p.participant && c.execution_status === 'completed' && (!counted || counted.test(c))).length;
    expected += want;
    matched += Math.min(want, got);
    if (want !== got) missing.push(`${p.participant}: native ${want}, captured ${got}`);
  }
  return {
    method: 'count',
    status: missing.length === 0 ? 'verified' : 'mismatch',
    expected,
    matched,
    missing,
    detail: `${missing.length === 0 ? 'counts agree' : 'counts differ'} (a count check cannot tell which call is which output; weaker than per_id)${counted ? `; counted: ${counted.rule} (${excluded} calls not counted)` : ''}`,
  };
}

/** Attribution by a header value, for calls the response-id join left unattributed. */
export function joinByHeader(calls: readonly Call[], join: HeaderJoin): Call[] {
  return calls.map((c) => {
    if (c.identity_status === 'attributed') return c;
    const value = c.native_identity[join.field];
    const participant = value === undefined ? undefined : join.participants[value];
    if (!participant) return c;
    const reasons = { ...c.status_reasons };
    delete reasons.identity_status;
    return withCallFields(c, { participant_id: participant, identity_status: 'attributed', status_reasons: reasons });
  });
}

/** Every unattributed call to the one participant there is, the evidence (a dedicated proxy) in the status reasons. */
export function joinSole(calls: readonly Call[], sole: { participant: string; evidence: string }): Call[] {
  return calls.map((c) => {
    if (c.identity_status === 'attributed') return c;
    return withCallFields(c, { participant_id: sole.participant, identity_status: 'attributed', status_reasons: { ...c.status_reasons, identity_status: sole.evidence } });
  });
}

/** Unattributed calls a native record holds the output of (NativeCapture.recordedOutputs), with that evidence. */
export function joinRecordedOutputs(calls: readonly Call[], recorded: Readonly<Record<string, { participant: string; evidence: string }>>): Call[] {
  return calls.map((c) => {
    const r = recorded[c.call_id];
    if (c.identity_status === 'attributed' || !r) return c;
    return withCallFields(c, { participant_id: r.participant, identity_status: 'attributed', status_reasons: { ...c.status_reasons, identity_status: r.evidence } });
  });
}
