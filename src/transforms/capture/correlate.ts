import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Transform } from '../../core/stage.js';
import { attributeByResponseId, outputOwners, withExportStatus } from './attribute.js';
import { joinCallByHeader, joinCallToRecordedOutput, joinCallToSole } from './coverage.js';

/** What attribution is decided from: the participants, and the joins an adapter's NativeCapture offers. */
export type CorrelationEvidence = Pick<NativeCapture, 'headerJoin' | 'soleParticipant' | 'recordedOutputs'> & { participants: readonly ParticipantUsage[] };

/**
 * The attribution correlators as one per-call step: by response id, then (for what that left unattributed) by
 * header value, to the sole participant, by a recorded output; then the export status. A call is decided from
 * itself and the native evidence alone — never from other calls, their time, text or order.
 */
export function callCorrelator(o: CorrelationEvidence): (call: Call) => Call {
  const owners = outputOwners(o.participants);
  const sole = o.soleParticipant && o.participants.length === 1 ? o.soleParticipant : undefined;
  return (call) => {
    let c = attributeByResponseId(call, owners);
    if (o.headerJoin) c = joinCallByHeader(c, o.headerJoin);
    if (sole) c = joinCallToSole(c, sole);
    if (o.recordedOutputs) c = joinCallToRecordedOutput(c, o.recordedOutputs);
    return withExportStatus(c);
  };
}

/** callCorrelator as a stage. */
export function correlateCalls(o: CorrelationEvidence): Transform<Call, Call> {
  const correlate = callCorrelator(o);
  return async function* (input) {
    for await (const call of input) yield correlate(call);
  };
}
