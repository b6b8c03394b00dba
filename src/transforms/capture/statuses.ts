import type { Call } from '../../schemas/call.js';
import type { Coverage, Manifest } from '../../schemas/manifest.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Relation } from '../../schemas/relation.js';

/**
 * What the capture's statuses need of its calls, tallied as they pass. A request on no model protocol's path (a
 * harness's probe of its server: `GET /v1/models`, Hermes's keyless `GET /api/tags`, refused) is no participant's
 * model call: it is recorded with its own statuses, and decides nothing of the capture's.
 */
export class CallTally {
  /** Every call complete, every model call attributed. */
  allComplete = true;
  /** A model call that did not complete. */
  anyFailed = false;

  observe(c: Call): void {
    if (c.protocol === 'other') return;
    if (c.capture_status !== 'complete' || c.identity_status !== 'attributed') this.allComplete = false;
    if (c.execution_status !== 'completed') this.anyFailed = true;
  }
}

export interface CaptureOutcome {
  lifecycle: NonNullable<Manifest['lifecycle']>;
  captureStatus: Manifest['capture_status'];
  /** raw/ is kept (seeds/000 retention: full, or on-error when the capture is incomplete or anything failed). */
  keepRaw: boolean;
}

/**
 * Lifecycle, capture status and retention (seeds/000): a child neither completed nor failed is pending; a completed
 * child whose result was never delivered, or an unknown relation, leaves the lifecycle unknown; the capture is
 * complete only with a complete lifecycle, every call complete and attributed and no coverage mismatch.
 */
export function captureOutcome(o: { participants: readonly ParticipantUsage[]; relations: readonly Relation[]; tally: CallTally; coverage: Coverage; retention: 'on-error' | 'full' | 'off' }): CaptureOutcome {
  const children = o.participants.filter((p) => p.role === 'child');
  const pending = children.filter((p) => p.status !== 'completed' && p.status !== 'failed').map((p) => p.participant);
  const undelivered = children.filter((p) => p.status === 'completed' && !o.relations.some((r) => r.type === 'result_delivered' && r.child_participant_id === p.participant));
  const lifecycle: CaptureOutcome['lifecycle'] = {
    status: pending.length > 0 ? 'pending' : undelivered.length > 0 || o.relations.some((r) => r.status === 'unknown') ? 'unknown' : 'complete',
    pending_participant_ids: pending,
  };
  const captureStatus: Manifest['capture_status'] = lifecycle.status === 'complete' && o.tally.allComplete && o.coverage.status !== 'mismatch' ? 'complete' : 'partial';
  const failed = o.tally.anyFailed || children.some((p) => p.status === 'failed');
  const keepRaw = o.retention === 'full' || (o.retention === 'on-error' && (captureStatus !== 'complete' || failed));
  return { lifecycle, captureStatus, keepRaw };
}
