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

/**
 * DeepSeek's dsh: each session's event log lines as dsh wrote them (dsh-session-persistence-jsonl), root session
 * first, then its sub-agent sessions; a session's lines open with its header. roller checks the frame its readers
 * rely on and keeps every other field as written (a release may add some).
 */
export const DEEPSEEK_EVENTS_SCHEMA = 'roller.deepseek-events/v1' as const;
export const DeepSeekEvent = z
  .union([
    z.looseObject({
      type: z.literal('session'),
      version: z.number().int().nonnegative(),
      id: z.string().min(1),
      createdAt: z.number(),
      cwd: z.string(),
      parentSession: z.string().min(1).optional(),
      origin: z.string().optional(),
      delegationDepth: z.number().int().nonnegative().optional(),
    }),
    z.looseObject({ type: z.string().min(1).refine((t) => t !== 'session', { message: 'a session header needs id, version, createdAt and cwd' }), seq: z.number().int().nonnegative(), time: z.number(), data: z.record(z.string(), z.unknown()) }),
    // Streamed chunks batched into one line (text-chunks, tool-call-chunks, …): numbered from seq0, timed from time0.
    z.looseObject({ type: z.string().regex(/-chunks$/), seq0: z.number().int().nonnegative(), time0: z.number(), data: z.record(z.string(), z.unknown()) }),
  ])
  .describe('roller.deepseek-events/v1: dsh session log lines as written, one per line, each session opening with its header');
export type DeepSeekEvent = z.infer<typeof DeepSeekEvent>;
