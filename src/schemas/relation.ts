import { z } from 'zod';

export const RELATION_SCHEMA = 'roller.relation/v1';

export const RelationType = z.enum([
  'spawn',
  'result_delivered',
  'child_completed',
  'child_failed',
  'result_in_context',
  'launch_acknowledged',
  'launch_ack_in_context',
]);
export type RelationType = z.infer<typeof RelationType>;

export const Evidence = z.strictObject({
  source: z.string().min(1).describe('the native file (or capture file) the evidence was read from'),
  event_id: z.string().min(1).describe('native event / part / message id inside that source'),
  retained: z.boolean().describe('false once debug material was cleaned up; the source name stays'),
});

const CONTEXT_TYPES = new Set<RelationType>(['result_in_context', 'launch_ack_in_context']);

export const Relation = z
  .strictObject({
    schema: z.literal(RELATION_SCHEMA),
    relation_id: z.string().min(1),
    type: RelationType,
    parent_participant_id: z.string().nullable(),
    child_participant_id: z.string().nullable(),
    tool_call_id: z.string().nullable(),
    model_tool_ref: z
      .strictObject({ call_id: z.string().nullable(), item_id: z.string().nullable() })
      .nullable()
      .describe('both ids checked in the HTTP output where the harness uses both'),
    parent_call_id: z.string().describe('the parent model call, or "unknown" when not unique'),
    in_call_id: z.string().nullable().describe('the later call whose actual input holds the result (for *_in_context)'),
    evidence: z.array(Evidence).min(1),
    status: z.enum(['established', 'unknown']),
    reason: z.string().nullable(),
  })
  .superRefine((r, ctx) => {
    if (CONTEXT_TYPES.has(r.type) && r.status === 'established' && r.in_call_id === null) {
      ctx.addIssue({ code: 'custom', path: ['in_call_id'], message: `${r.type} that is established needs in_call_id` });
    }
    if (r.status === 'unknown' && !r.reason) {
      ctx.addIssue({ code: 'custom', path: ['reason'], message: 'an unknown relation must say why' });
    }
  })
  .describe('roller.relation/v1: an evidence-backed launch, delivery or context association (relations.jsonl)');
export type Relation = z.infer<typeof Relation>;
