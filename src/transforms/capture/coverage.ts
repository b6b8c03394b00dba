import type { HeaderJoin, NativeOutputs, ToolCallJoin } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Call } from '../../schemas/call.js';
import type { Coverage } from '../../schemas/manifest.js';
import { withCallFields } from '../../schemas/call-context.js';
import { toolResultIdsIn } from './relations.js';

/**
 * The coverage check of seeds/000: do the captured calls and the native outputs account for each other?
 * per_id checks every native output id against an attributed call; count compares each participant's
 * number of completed, attributed calls with the native count (weaker, and the result says so); none
 * records that nothing could be checked. Calls no participant claims are counted by attribution already.
 * Calls are observed one at a time as they pass; only ids and counts are kept.
 */
export class CoverageCheck {
  private readonly seen = new Set<string>();
  private readonly counts = new Map<string, number>();
  private excluded = 0;

  constructor(private readonly outputs: NativeOutputs) {}

  observe(c: Call): void {
    const o = this.outputs;
    if (o.method === 'per_id') {
      if (c.identity_status === 'attributed' && c.response_id) this.seen.add(`${c.participant_id}\u0000${c.response_id}`);
    } else if (o.method === 'count') {
      if (o.counted && !o.counted.test(c)) this.excluded++;
      else if (c.participant_id !== null && c.execution_status === 'completed') this.counts.set(c.participant_id, (this.counts.get(c.participant_id) ?? 0) + 1);
    }
  }

  result(participants: readonly ParticipantUsage[]): Coverage {
    const outputs = this.outputs;
    if (outputs.method === 'none') return { method: 'none', status: 'unverified', expected: 0, matched: 0, missing: [], detail: outputs.reason };
    if (outputs.method === 'per_id') {
      const expected = participants.flatMap((p) => p.message_ids.map((id) => ({ p: p.participant, id })));
      const missing = expected.filter((e) => !this.seen.has(`${e.p}\u0000${e.id}`)).map((e) => `${e.p}: ${e.id}`);
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
    for (const p of participants) {
      const want = outputs.counts[p.participant] ?? 0;
      const got = this.counts.get(p.participant) ?? 0;
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
      detail: `${missing.length === 0 ? 'counts agree' : 'counts differ'} (a count check cannot tell which call is which output; weaker than per_id)${outputs.counted ? `; counted: ${outputs.counted.rule} (${this.excluded} calls not counted)` : ''}`,
    };
  }
}

/** CoverageCheck over an array of calls. */
export function checkCoverage(calls: readonly Call[], participants: readonly ParticipantUsage[], outputs: NativeOutputs): Coverage {
  const check = new CoverageCheck(outputs);
  for (const c of calls) check.observe(c);
  return check.result(participants);
}

/** Attribution by a header value, for a call the response-id join left unattributed. */
export function joinCallByHeader(c: Call, join: HeaderJoin): Call {
  if (c.identity_status === 'attributed') return c;
  const fields = typeof join.field === 'string' ? [join.field] : join.field;
  const value = fields.map((f) => c.native_identity[f]).find((v) => v !== undefined);
  const participant = value === undefined ? undefined : join.participants[value];
  if (!participant) return c;
  const reasons = { ...c.status_reasons };
  delete reasons.identity_status;
  return withCallFields(c, { participant_id: participant, identity_status: 'attributed', status_reasons: reasons });
}

/** An unattributed call to the one participant there is, the evidence (a dedicated proxy) in the status reasons. */
export function joinCallToSole(c: Call, sole: { participant: string; evidence: string }): Call {
  if (c.identity_status === 'attributed') return c;
  return withCallFields(c, { participant_id: sole.participant, identity_status: 'attributed', status_reasons: { ...c.status_reasons, identity_status: sole.evidence } });
}

/** An unattributed call a native record holds the output of (NativeCapture.recordedOutputs), with that evidence. */
/**
 * A call not attributed yet, joined by the tool-call ids it emitted (its output) or answers (tool results in its
 * input) to the one participant whose records hold them; ids of two participants decide nothing (said so).
 */
export function joinCallByToolCalls(c: Call, join: ToolCallJoin): Call {
  if (c.identity_status === 'attributed') return c;
  const ids = [...c.tool_refs.map((r) => r.id), ...toolResultIdsIn(c)];
  const owners = new Set(ids.map((id) => join.owners[id]).filter((p): p is string => p !== undefined));
  if (owners.size !== 1) {
    if (owners.size === 0) return c;
    return withCallFields(c, { status_reasons: { ...c.status_reasons, identity_status: `its tool-call ids are recorded under ${[...owners].sort().join(' and ')} (${join.source}): not attributed` } });
  }
  const [participant] = owners;
  const id = ids.find((x) => join.owners[x] === participant)!;
  const how = c.tool_refs.some((r) => r.id === id) ? 'emitted' : 'answers';
  return withCallFields(c, { participant_id: participant!, identity_status: 'attributed', status_reasons: { ...c.status_reasons, identity_status: `it ${how} tool call ${id}, which ${join.source} records under ${participant}` } });
}

export function joinCallToRecordedOutput(c: Call, recorded: Readonly<Record<string, { participant: string; evidence: string }>>): Call {
  const r = recorded[c.call_id];
  if (c.identity_status === 'attributed' || !r) return c;
  return withCallFields(c, { participant_id: r.participant, identity_status: 'attributed', status_reasons: { ...c.status_reasons, identity_status: r.evidence } });
}

export const joinByHeader = (calls: readonly Call[], join: HeaderJoin): Call[] => calls.map((c) => joinCallByHeader(c, join));
export const joinSole = (calls: readonly Call[], sole: { participant: string; evidence: string }): Call[] => calls.map((c) => joinCallToSole(c, sole));
export const joinRecordedOutputs = (calls: readonly Call[], recorded: Readonly<Record<string, { participant: string; evidence: string }>>): Call[] => calls.map((c) => joinCallToRecordedOutput(c, recorded));
