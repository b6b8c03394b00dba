import type { Columns } from '../../core/parquet/columns.js';
import type { Call } from '../../schemas/call.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import type { Relation } from '../../schemas/relation.js';

/**
 * The run's tables as Parquet, with the columns and meaning of `roller query`'s views of the same names
 * (docs/commands/query.md): a test compares each table with its view over the same run, row by row.
 */
const TOKENS: Columns = [
  ['input', 'int64'],
  ['cache_creation', 'int64'],
  ['cache_read', 'int64'],
  ['output', 'int64'],
  ['reasoning', 'int64'],
];
const WHERE: Columns = [
  ['run', 'string'],
  ['sample', 'string'],
];

export const TABLE_COLUMNS = {
  samples: [
    ...WHERE,
    ['task_id', 'string'],
    ['index', 'int32'],
    ['model', 'string'],
    ['harness', 'string'],
    ['harness_version', 'string'],
    ['status', 'string'],
    ['error', 'string'],
    ['elapsed_ms', 'int64'],
    ['input', 'int64'],
    ['cache_creation', 'int64'],
    ['cache_read', 'int64'],
    ['output', 'int64'],
    ['reasoning', 'int64'],
    ['cost_usd', 'float64'],
    ['priced_cost_usd', 'float64'],
    ['cost_source', 'string'],
    ['requests', 'int64'],
    ['sft_eligible', 'bool'],
    ['sft_reason', 'string'],
    ['grade', 'string'],
    ['scores', 'string'],
    ['subagents', 'int64'],
  ],
  participants: [
    ...WHERE,
    ['task_id', 'string'],
    ['model', 'string'],
    ['participant', 'string'],
    ['role', 'string'],
    ['parent', 'string'],
    ['depth', 'int32'],
    ['spawn_tool_call_id', 'string'],
    ['messages', 'int64'],
    ...TOKENS,
    ['cost_usd', 'float64'],
    ['priced_cost_usd', 'float64'],
    ['cost_source', 'string'],
    ['status', 'string'],
    ['reason', 'string'],
  ],
  calls: [
    ...WHERE,
    ['call_id', 'string'],
    ['seq', 'int64'],
    ['protocol', 'string'],
    ['participant_id', 'string'],
    ['model', 'string'],
    ['http_status', 'int32'],
    ['started_at', 'timestamp'],
    ['ended_at', 'timestamp'],
    ['ttfb_ms', 'int64'],
    ['duration_ms', 'int64'],
    ...TOKENS,
    ['tools', { list: 'string' }],
    ['tool_call_ids', { list: 'string' }],
    ['execution_status', 'string'],
    ['response_capture_status', 'string'],
    ['identity_status', 'string'],
    ['capture_status', 'string'],
    ['export_status', 'string'],
    ['errors', 'int64'],
  ],
  relations: [
    ...WHERE,
    ['relation_id', 'string'],
    ['type', 'string'],
    ['status', 'string'],
    ['parent_participant_id', 'string'],
    ['child_participant_id', 'string'],
    ['tool_call_id', 'string'],
    ['parent_call_id', 'string'],
    ['in_call_id', 'string'],
    ['reason', 'string'],
  ],
} satisfies Record<string, Columns>;
export type TableName = keyof typeof TABLE_COLUMNS;

type Where = { run: string; sample: string };

export function sampleRow(where: Where, s: FinishedSample) {
  const i = s.info;
  const u = i.usage;
  const participants = i.runtime?.participants;
  return {
    ...where,
    task_id: i.task_id,
    index: i.index,
    model: i.model,
    harness: i.harness?.name ?? null,
    harness_version: i.harness?.version ?? null,
    status: i.status,
    error: i.error?.message ?? null,
    elapsed_ms: i.elapsed_ms ?? null,
    input: u?.input ?? null,
    cache_creation: u?.cache_creation ?? null,
    cache_read: u?.cached_input ?? null,
    output: u?.output ?? null,
    reasoning: u?.reasoning ?? null,
    cost_usd: u?.cost_usd ?? null,
    priced_cost_usd: u?.priced_cost_usd ?? null,
    cost_source: u?.cost_source ?? null,
    requests: u?.requests ?? null,
    sft_eligible: i.runtime?.sft_eligibility?.eligible ?? null,
    sft_reason: i.runtime?.sft_eligibility?.reason ?? null,
    grade: i.grade?.status ?? null,
    scores: i.grade ? JSON.stringify(i.grade.scores) : null,
    subagents: participants ? participants.length - 1 : null,
  };
}

export function participantRows(where: Where, s: FinishedSample) {
  return (s.info.runtime?.participants ?? []).map((p) => ({
    ...where,
    task_id: s.info.task_id,
    model: s.info.model,
    participant: p.participant,
    role: p.role,
    parent: p.parent,
    depth: p.depth,
    spawn_tool_call_id: p.spawn_tool_call_id,
    messages: p.messages,
    input: p.tokens?.input ?? null,
    cache_creation: p.tokens?.cache_creation ?? null,
    cache_read: p.tokens?.cache_read ?? null,
    output: p.tokens?.output ?? null,
    reasoning: p.tokens?.reasoning ?? null,
    cost_usd: p.cost_usd ?? null,
    priced_cost_usd: p.priced_cost_usd ?? null,
    cost_source: p.cost_source ?? null,
    status: p.status ?? null,
    reason: p.reason,
  }));
}

const ms = (t: string | null | undefined) => (t ? Date.parse(t) : null);
const between = (a: string | null | undefined, b: string | null | undefined) => (a && b ? ms(b)! - ms(a)! : null);

export function callRow(where: Where, c: Call) {
  const n = c.usage.normalized;
  return {
    ...where,
    call_id: c.call_id,
    seq: c.seq,
    protocol: c.protocol,
    participant_id: c.participant_id,
    model: c.response_model ?? c.request_model,
    http_status: c.http_status,
    started_at: c.started_at,
    ended_at: c.ended_at,
    ttfb_ms: between(c.started_at, c.first_byte_at),
    duration_ms: between(c.started_at, c.ended_at),
    input: n?.input ?? null,
    cache_creation: n?.cache_creation ?? null,
    cache_read: n?.cached_input ?? null,
    output: n?.output ?? null,
    reasoning: n?.reasoning ?? null,
    tools: c.tool_refs.map((t) => t.name),
    tool_call_ids: c.tool_refs.map((t) => t.id),
    execution_status: c.execution_status,
    response_capture_status: c.response_capture_status,
    identity_status: c.identity_status,
    capture_status: c.capture_status,
    export_status: c.export_status,
    errors: c.errors.length,
  };
}

export function relationRow(where: Where, r: Relation) {
  const x = r as unknown as Record<string, string | null | undefined>;
  const pick = (k: string) => x[k] ?? null;
  return {
    ...where,
    relation_id: r.relation_id,
    type: r.type,
    status: r.status,
    parent_participant_id: pick('parent_participant_id'),
    child_participant_id: pick('child_participant_id'),
    tool_call_id: pick('tool_call_id'),
    parent_call_id: pick('parent_call_id'),
    in_call_id: pick('in_call_id'),
    reason: pick('reason'),
  };
}
