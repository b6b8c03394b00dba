import { z } from 'zod';

/**
 * Event schemas roller defines for harnesses it cannot run here (issue 8): a line per native row or
 * event, in the harness's own field names, so a converter reads one stable shape whatever store it came
 * from. Unknown fields are kept (loose), a missing required field is an error with its path.
 */

const ToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

/** Hermes (NousResearch/hermes-agent) state.db rows: `sessions` and `messages`. */
export const HERMES_EVENTS_SCHEMA = 'roller.hermes-events/v1' as const;
export const HermesSessionRow = z.looseObject({
  id: z.string().min(1),
  source: z.string().describe('cli | tui | subagent | telegram | ... ("subagent": a delegate_task child)'),
  model: z.string().nullable().optional(),
  parent_session_id: z.string().nullable().optional().describe('links both delegation (source subagent) and compression chains'),
  started_at: z.number().describe('epoch seconds'),
  ended_at: z.number().nullable().optional(),
  end_reason: z.string().nullable().optional(),
  input_tokens: z.number().int().nonnegative().nullable().optional(),
  output_tokens: z.number().int().nonnegative().nullable().optional(),
  cache_read_tokens: z.number().int().nonnegative().nullable().optional(),
  cache_write_tokens: z.number().int().nonnegative().nullable().optional(),
  reasoning_tokens: z.number().int().nonnegative().nullable().optional(),
  estimated_cost_usd: z.number().nonnegative().nullable().optional(),
  system_prompt: z.string().nullable().optional(),
});
export const HermesMessageRow = z.looseObject({
  id: z.number().int(),
  session_id: z.string().min(1),
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullable().optional(),
  tool_calls: z.union([z.array(ToolCall), z.string()]).nullable().optional().describe('JSON (a string in the database)'),
  tool_call_id: z.string().nullable().optional(),
  tool_name: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
  reasoning_content: z.string().nullable().optional(),
  finish_reason: z.string().nullable().optional(),
  timestamp: z.number().describe('epoch seconds'),
  active: z.number().int().optional().describe('0: superseded (not in the conversation any more)'),
});
export const HermesEvent = z
  .discriminatedUnion('kind', [
    z.strictObject({ schema: z.literal(HERMES_EVENTS_SCHEMA), kind: z.literal('session'), session: HermesSessionRow }),
    z.strictObject({ schema: z.literal(HERMES_EVENTS_SCHEMA), kind: z.literal('message'), message: HermesMessageRow }),
  ])
  .describe('roller.hermes-events/v1: one Hermes state.db row per line');
export type HermesEvent = z.infer<typeof HermesEvent>;

/** DeepSeek, sdk-minimal profile: the runner's own event log (a root agent only; no delegation). */
export const DEEPSEEK_EVENTS_SCHEMA = 'roller.deepseek-events/v1' as const;
const DeepSeekUsage = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  prompt_cache_hit_tokens: z.number().int().nonnegative().optional(),
  prompt_cache_miss_tokens: z.number().int().nonnegative().optional(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().nonnegative().optional() }).optional(),
});
const DeepSeekBase = { schema: z.literal(DEEPSEEK_EVENTS_SCHEMA), session_id: z.string().min(1), seq: z.number().int().nonnegative(), ts: z.string() };
export const DeepSeekEvent = z
  .discriminatedUnion('type', [
    z.strictObject({ ...DeepSeekBase, type: z.literal('session_start'), model: z.string(), cwd: z.string(), system_prompt: z.string().nullable(), tools: z.array(z.unknown()).nullable() }),
    z.strictObject({ ...DeepSeekBase, type: z.literal('user'), content: z.string() }),
    z.strictObject({
      ...DeepSeekBase,
      type: z.literal('assistant'),
      response_id: z.string().min(1).describe('the Chat Completions id: the per-id join to a captured call'),
      content: z.string().nullable(),
      reasoning_content: z.string().nullable().optional(),
      tool_calls: z.array(ToolCall).optional(),
      finish_reason: z.string().nullable(),
      usage: DeepSeekUsage.nullable(),
    }),
    z.strictObject({ ...DeepSeekBase, type: z.literal('tool_result'), tool_call_id: z.string().min(1), content: z.string(), is_error: z.boolean() }),
    z.strictObject({ ...DeepSeekBase, type: z.literal('session_end'), status: z.enum(['completed', 'failed', 'interrupted']), reason: z.string().nullable() }),
  ])
  .describe('roller.deepseek-events/v1: the DeepSeek runner event log, one event per line');
export type DeepSeekEvent = z.infer<typeof DeepSeekEvent>;
