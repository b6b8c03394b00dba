import { z } from 'zod';
import { FileDigest, HarnessName, IsoTimestamp, NonNegativeInt, RecordedError, UsageTotals } from './common.js';

export const CAPTURE_SCHEMA = 'roller.capture/v1';

export const ParticipantStatus = z.enum(['completed', 'failed', 'running', 'unknown', 'missing']).describe('missing: a participant its parent names whose own records are not there (its tokens are unknown)');

/** A later delegation that resumed a participant (Claude Code: SendMessage to a finished agent), judged by its own tool id. */
export const Resumption = z
  .strictObject({
    tool_call_id: z.string().min(1).describe('the tool call that resumed it'),
    parent_participant_id: z.string().min(1).describe('the participant that made that call'),
    status: ParticipantStatus.describe("how this delegation ended, from the completion that names its tool id (never an earlier one's); running: launched, no completion on record"),
    status_source: z.string().nullable(),
  })
  .describe('seeds/000: a new delegation that resumes the same child is judged finished by its new tool id');
export type Resumption = z.infer<typeof Resumption>;

export const SpawnStatus = z
  .strictObject({ status: ParticipantStatus, status_source: z.string().nullable() })
  .describe("with resumed_by: how the spawning delegation itself ended, and where that was read");

export const Participant = z
  .strictObject({
    participant_id: z.string().min(1).describe('opaque; consumers read role, never the id prefix'),
    role: z.enum(['root', 'child']),
    native_ids: z
      .record(z.string(), z.string())
      .describe('native identifiers (session_id, thread_id, agent_id, ...) as the harness names them'),
    parent_participant_id: z.string().nullable(),
    spawn_tool_call_id: z.string().nullable(),
    depth: z.number().int().min(-1).describe('0 the root; a child its distance from it; -1 a child whose spawning call is not on record (seeds/004)'),
    model: z.string().nullable(),
    call_ids: z.array(z.string()),
    status: ParticipantStatus,
    status_source: z.string().nullable().describe('where the status was read (native file and event)'),
    reason: z.string().nullable().optional().describe('why something about it is unknown (its spawning call, its parent), in words; absent in older records'),
    spawn_result: z
      .enum(['result', 'acknowledgement'])
      .nullable()
      .optional()
      .describe("what the spawn call's own tool result was (a launch acknowledgement is never completion): what relations are derived from; absent in older records"),
    resumed_by: z.array(Resumption).optional().describe('later delegations that resumed it, in order; with them, status is the last one\'s'),
    spawn_status: SpawnStatus.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.role === 'root' && (p.parent_participant_id !== null || p.depth !== 0)) {
      ctx.addIssue({ code: 'custom', path: ['role'], message: 'a root participant has no parent and depth 0' });
    }
    // A child's parent may be unknown (null, with the reason in status_source): recorded, never made up.
    const unseenSpawn = p.spawn_tool_call_id === null || p.parent_participant_id === null;
    if (p.role === 'child' && p.depth < 1 && !(p.depth === -1 && unseenSpawn)) {
      ctx.addIssue({ code: 'custom', path: ['depth'], message: 'a child participant has depth >= 1, or -1 when its spawning call is not on record' });
    }
    if (p.role === 'child' && p.depth === -1 && !p.reason) {
      ctx.addIssue({ code: 'custom', path: ['reason'], message: 'a child of depth -1 says why its spawning call is unknown' });
    }
  });
export type Participant = z.infer<typeof Participant>;

export const Capabilities = z.strictObject({
  native_output_coverage: z
    .enum(['per_id', 'count', 'none'])
    .describe('how calls were checked against native outputs; a count check is weaker than a per-id check'),
  delegation: z.enum(['native', 'not_available_in_bundled_profile']),
  background: z.boolean(),
});

export const Coverage = z
  .strictObject({
    method: z.enum(['per_id', 'count', 'none']),
    status: z.enum(['verified', 'mismatch', 'unverified']),
    expected: NonNegativeInt.describe('native outputs (ids or counted messages)'),
    matched: NonNegativeInt,
    missing: z.array(z.string()).describe('per_id: participant: output id without a call; count: participant: native n, captured m'),
    detail: z.string(),
  })
  .describe('the check of captured calls against native outputs (seeds/000)');
export type Coverage = z.infer<typeof Coverage>;

export const Lifecycle = z.strictObject({
  status: z.enum(['complete', 'pending', 'unknown', 'unsupported']),
  pending_participant_ids: z.array(z.string()),
});

export const Manifest = z
  .strictObject({
    schema: z.literal(CAPTURE_SCHEMA),
    storage_layout: z.enum(['compact/v2', 'compact/v1', 'legacy']),
    harness: z.strictObject({ name: HarnessName, version: z.string() }),
    capture_scope: z.string().min(1).describe('random scope embedded in call and relation ids'),
    attempt: z.number().int().positive(),
    created_at: IsoTimestamp,
    participants: z.array(Participant),
    capabilities: Capabilities,
    lifecycle: Lifecycle.optional().describe('absent in older records'),
    coverage: Coverage.optional().describe('absent in older records'),
    capture_status: z.enum(['complete', 'partial', 'error']),
    debug_retention: z.enum(['on-error', 'full', 'off']),
    raw_retained: z.boolean(),
    totals: UsageTotals.extend({
      calls: NonNegativeInt,
      relations: NonNegativeInt,
      unattributed_calls: NonNegativeInt,
    }),
    token_continuity: z
      .strictObject({
        calls_with_ids: NonNegativeInt,
        checked: NonNegativeInt,
        continuous: NonNegativeInt,
        breaks: z.array(
          z.strictObject({
            participant_id: z.string(),
            call_id: z.string(),
            previous_call_id: z.string(),
            at_token: NonNegativeInt,
            expected: NonNegativeInt.nullable(),
            found: NonNegativeInt.nullable(),
            reason: z.string(),
          }),
        ),
      })
      .optional()
      .describe("with token ids from the server: per agent, whether each call's prompt begins with its previous call's prompt + completion, and where and why not"),
    files: z.record(z.string(), FileDigest).describe('published after the recorder closes; relative path -> digest'),
    errors: z.array(RecordedError),
  })
  .superRefine((m, ctx) => {
    const ids = new Set<string>();
    m.participants.forEach((p, i) => {
      if (ids.has(p.participant_id)) {
        ctx.addIssue({ code: 'custom', path: ['participants', i, 'participant_id'], message: `duplicate participant_id '${p.participant_id}'` });
      }
      ids.add(p.participant_id);
    });
    m.participants.forEach((p, i) => {
      if (p.parent_participant_id !== null && !ids.has(p.parent_participant_id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['participants', i, 'parent_participant_id'],
          message: `parent '${p.parent_participant_id}' is not a participant of this capture`,
        });
      }
    });
    if (m.coverage?.status === 'mismatch' && m.capture_status === 'complete') {
      ctx.addIssue({ code: 'custom', path: ['capture_status'], message: 'native outputs and captured calls do not match: the capture must not be complete' });
    }
    if (m.lifecycle && m.lifecycle.status !== 'complete' && m.capture_status === 'complete') {
      ctx.addIssue({ code: 'custom', path: ['capture_status'], message: `lifecycle is ${m.lifecycle.status}: the capture must not be complete` });
    }
  })
  .describe('roller.capture/v1: one capture attempt (manifest.json)');
export type Manifest = z.infer<typeof Manifest>;

/**
 * Manifests of the older layouts (seeds/000: validation stays compatible with the old layout and compact/v1):
 * the fields compact/v2 introduced — debug_retention, raw_retained, lifecycle, coverage — may be absent.
 */
export const OlderManifest = z
  .looseObject({
    schema: z.literal(CAPTURE_SCHEMA),
    storage_layout: z.enum(['compact/v1', 'legacy']),
    harness: z.strictObject({ name: HarnessName, version: z.string() }),
    capture_scope: z.string().min(1),
    attempt: z.number().int().positive(),
    participants: z.array(Participant),
    capture_status: z.enum(['complete', 'partial', 'error']),
    debug_retention: z.enum(['on-error', 'full', 'off']).optional(),
    raw_retained: z.boolean().optional(),
    files: z.record(z.string(), FileDigest),
  })
  .describe('roller.capture/v1 in the compact/v1 or legacy layout (read and validated, never written)');
