import type { Call } from '../../schemas/call.js';
import type { HeaderJoin, NativeCapture } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import { attributeByResponseId, outputOwners, withExportStatus } from './attribute.js';
import { joinCallByHeader, joinCallByToolCalls, joinCallToRecordedOutput, joinCallToSole } from './coverage.js';

/** What attribution is decided from: the participants, and the joins an adapter's NativeCapture offers. */
export type CorrelationEvidence = Pick<NativeCapture, 'headerJoin' | 'toolCallJoin' | 'soleParticipant' | 'recordedOutputs'> & { participants: readonly ParticipantUsage[] };

/**
 * The attribution correlators as one per-call step: by response id, then (for what that left unattributed) by
 * header value, by the tool-call ids it emitted or answers, to the sole participant, by a recorded output; then the
 * export status. A call is decided from
 * itself and the native evidence alone — never from other calls, their time, text or order.
 */
export function callCorrelator(o: CorrelationEvidence): (call: Call) => Call {
  const owners = outputOwners(o.participants);
  const sole = o.soleParticipant && o.participants.length === 1 ? o.soleParticipant : undefined;
  return (call) => {
    let c = attributeByResponseId(call, owners);
    if (o.headerJoin) c = joinCallByHeader(c, o.headerJoin);
    if (o.toolCallJoin) c = joinCallByToolCalls(c, o.toolCallJoin);
    if (sole) c = joinCallToSole(c, sole);
    if (o.recordedOutputs) c = joinCallToRecordedOutput(c, o.recordedOutputs);
    return withExportStatus(c);
  };
}

/**
 * callCorrelator over an array of calls (scripts and tests holding them): the response-id join, and with `headerField`
 * (a harness whose records name no response id: OpenCode, older Codex) the join by that identity header field.
 */
export function attributeCalls(calls: readonly Call[], participants: readonly ParticipantUsage[], headerField?: HeaderJoin['field']): Call[] {
  const headerJoin = headerField ? { field: headerField, participants: Object.fromEntries(participants.map((p) => [p.native_id, p.participant])) } : undefined;
  return calls.map(callCorrelator({ participants, ...(headerJoin ? { headerJoin } : {}) }));
}
