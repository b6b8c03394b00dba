import { z } from 'zod';
import { Content } from './content.js';
import { IsoTimestamp, NonNegativeInt } from './common.js';

export const ACTF_SCHEMA_VERSION = 'roller.actf/v1';

/**
 * A tool definition. Harnesses other than Codex normalise to the nested function shape; Codex keeps
 * native Responses definitions (namespaces, custom grammars), so any object with a `type` is allowed.
 */
export const FunctionToolDefinition = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()),
    strict: z.boolean().optional(),
  }),
});
export const NativeToolDefinition = z.looseObject({ type: z.string().min(1) });
export const ToolDefinition = z.union([FunctionToolDefinition, NativeToolDefinition]);

export const ActfToolCall = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  type: z.enum(['function', 'custom']).describe('custom: a freeform string input (Codex custom tools)'),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).describe('an object for function calls, the raw string for custom input'),
  namespace: z.string().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

export const ActfToolResult = z.strictObject({
  toolCallId: z.string().min(1),
  content: Content,
  isError: z.boolean(),
  details: z.unknown().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

export const ActfMetric = z.strictObject({
  prompt_tokens_len: NonNegativeInt.describe('all input tokens, cached and uncached'),
  completion_tokens_len: NonNegativeInt.describe('output tokens, including reasoning'),
  cache_read_tokens_len: NonNegativeInt,
  cache_creation_tokens_len: NonNegativeInt,
  reasoning_tokens_len: NonNegativeInt,
  cost_usd: z.number().nonnegative().nullable(),
  model: z.string().nullable(),
  llm_call_count: NonNegativeInt.describe('model calls merged into this step (streamed events sharing one message id count once)'),
});

export const ActfStep = z.strictObject({
  step_id: z.number().int().positive(),
  user_content: Content.nullable().describe('user input of this turn; null when the step continues after tool results'),
  assistant_content: z.strictObject({
    reasoning_content: z.string().nullable(),
    content: Content,
    tool_calls: z.array(ActfToolCall),
  }),
  observation: z
    .array(ActfToolResult)
    .describe('tool results that arrived after this step; a result may answer a call of an earlier step (background work)'),
  metric: ActfMetric.nullable(),
  started_at: IsoTimestamp.nullable(),
  finished_at: IsoTimestamp.nullable(),
  stop_reason: z.string().nullable(),
  native_ids: z.record(z.string(), z.string()).optional().describe('native message / response ids this step came from'),
  extra: z.record(z.string(), z.unknown()).optional(),
});
export type ActfStep = z.infer<typeof ActfStep>;

export const Actf = z
  .strictObject({
    schema_version: z.literal(ACTF_SCHEMA_VERSION),
    system_prompt: z.string(),
    system_prompt_source: z.enum(['wire', 'native', 'cache_trace', 'none']),
    tools: z.array(ToolDefinition).nullable().describe('null when the harness could not capture them'),
    tools_source: z.enum(['wire', 'native_derived', 'none']),
    tools_capture: z.array(z.unknown()).optional().describe('per-request tool snapshots (Codex)'),
    steps: z.array(ActfStep),
    timing: z.strictObject({
      started_at: IsoTimestamp.nullable(),
      finished_at: IsoTimestamp.nullable(),
      duration_ms: NonNegativeInt.nullable(),
    }),
    extra: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((actf, ctx) => {
    actf.steps.forEach((step, i) => {
      if (step.step_id !== i + 1) {
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'step_id'], message: `expected ${i + 1} (contiguous from 1), got ${step.step_id}` });
      }
    });
  })
  .describe('trace_ACTF.json: the unified analysis trace of the main participant');
export type Actf = z.infer<typeof Actf>;
