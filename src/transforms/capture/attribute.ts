import type { Call } from '../../schemas/call.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import { withCallFields } from '../../schemas/call-context.js';
import { addTo } from '../../core/multimap.js';

/** Each native output id (response / message id) with the participants that claim it. */
export type OutputOwners = ReadonlyMap<string, readonly string[]>;

export function outputOwners(participants: readonly ParticipantUsage[]): OutputOwners {
  const owners = new Map<string, string[]>();
  for (const p of participants) for (const id of p.message_ids) addTo(owners, id, p.participant);
  return owners;
}

/**
 * Attribution by evidence only (seeds/000): a call belongs to the participant whose native outputs include
 * the call's response id (Claude Code message.id; Codex token_usage_record.response_id). Never by time,
 * text or order. A response id claimed by two participants is ambiguous; one claimed by none stays
 * unattributed — both stay in calls.jsonl with the status saying so. (Its export status is set apart.)
 */
export function attributeByResponseId(call: Call, owners: OutputOwners): Call {
  const who = call.response_id ? (owners.get(call.response_id) ?? []) : [];
  const reasons = { ...call.status_reasons };
  let participant_id: string | null = null;
  let identity_status: Call['identity_status'];
  if (who.length === 1) {
    participant_id = who[0]!;
    identity_status = 'attributed';
    delete reasons.identity_status;
  } else if (who.length > 1) {
    identity_status = 'ambiguous';
    reasons.identity_status = `response ${call.response_id} is a native output of ${who.join(' and ')}`;
  } else {
    identity_status = 'unattributed';
    reasons.identity_status = call.response_id ? `response ${call.response_id} is no participant's native output` : 'the call has no response id to join on';
  }
  return withCallFields(call, { participant_id, identity_status, status_reasons: reasons });
}

/**
 * A call is exportable only when the response ended normally, input and response are complete, the
 * identity is unambiguous, the model matches and there are no capture errors (seeds/000).
 */
export function withExportStatus(call: Call): Call {
  const why: string[] = [];
  if (call.execution_status !== 'completed') why.push(`execution ${call.execution_status}`);
  if (call.response_capture_status !== 'complete') why.push(`response ${call.response_capture_status}`);
  if (call.capture_status !== 'complete') why.push(`capture ${call.capture_status}`);
  if (call.identity_status !== 'attributed') why.push(`identity ${call.identity_status}`);
  if (call.request_model && call.response_model && call.request_model !== call.response_model) why.push(`model ${call.response_model} answered a request for ${call.request_model}`);
  if (call.errors.length > 0) why.push(`${call.errors.length} capture errors`);
  const reasons = { ...call.status_reasons };
  if (why.length === 0) delete reasons.export_status;
  else reasons.export_status = why.join('; ');
  return withCallFields(call, { export_status: why.length === 0 ? 'exportable' : 'not_exportable', status_reasons: reasons });
}
