import { z } from 'zod';
import { IsoTimestamp, NormalizedUsage, RecordedError } from './common.js';

export const CALL_SCHEMA = 'roller.call/v1';

/** From the actual HTTP endpoint, never from the body or the harness's claim. */
export const Protocol = z.enum(['anthropic-messages', 'openai-chat-completions', 'openai-responses', 'other']);
export type Protocol = z.infer<typeof Protocol>;

export const ExecutionStatus = z
  .enum(['completed', 'failed', 'interrupted', 'timeout'])
  .describe('did the call finish executing (completed: the response ended normally)');
export const ResponseCaptureStatus = z
  .enum(['complete', 'partial', 'missing'])
  .describe('was the response written to disk completely');
export const IdentityStatus = z
  .enum(['attributed', 'unattributed', 'ambiguous'])
  .describe('can the owning participant be determined from evidence');
export const CaptureStatus = z.enum(['complete', 'partial', 'error']).describe('is this record complete');
export const ExportStatus = z.enum(['exportable', 'not_exportable']).describe('may this call enter per-call export');

export const NativeIdentity = z
  .strictObject({
    run_id: z.string().optional().describe('local native call identifier (the correlation header, removed before forwarding)'),
    session_id: z.string().optional(),
    thread_id: z.string().optional(),
    agent_id: z.string().optional(),
  })
  .describe('identity evidence taken from the request');

export const ToolRef = z.strictObject({
  id: z.string().min(1).describe('tool call id as the model emitted it'),
  name: z.string(),
  item_id: z.string().optional().describe('Responses output item id, where the protocol has one'),
});
export type ToolRef = z.infer<typeof ToolRef>;

export const CallUsage = z.strictObject({
  reported: z.record(z.string(), z.unknown()).nullable().describe('usage object as the provider reported it (last value wins)'),
  normalized: NormalizedUsage.nullable(),
});

const StatusReasons = z
  .strictObject({
    execution_status: z.string().optional(),
    response_capture_status: z.string().optional(),
    identity_status: z.string().optional(),
    capture_status: z.string().optional(),
    export_status: z.string().optional(),
  })
  .describe('why a status is not the good one');

const TokenIds = z.array(z.number().int().nonnegative());

/**
 * Token ids an open-model server returned (vLLM `return_token_ids`; SGLang `return_prompt_token_ids` /
 * `return_meta_info`), taken out of output. A long agent re-sends its
 * whole context every call, so a prompt is stored as `prompt_prefix` (the first `length` ids of the call it names:
 * its prompt then its completion, expanded the same way) followed by `prompt` (the rest): linear, not quadratic.
 */
export const CallTokenIds = z.strictObject({
  prompt: TokenIds.nullable().describe('the prompt ids (after prompt_prefix, when there is one)'),
  prompt_prefix: z.strictObject({ call_id: z.string().min(1), length: z.number().int().positive() }).optional().describe("the prompt's first ids: that many of the named call's prompt + completion"),
  completion: TokenIds.nullable().describe("the first choice's sampled ids"),
});
export type CallTokenIds = z.infer<typeof CallTokenIds>;

export const Call = z
  .strictObject({
    schema: z.literal(CALL_SCHEMA),
    call_id: z.string().min(1).describe('opaque; embeds the random capture scope'),
    seq: z.number().int().nonnegative().describe('order in which the proxy received requests in this capture'),
    protocol: Protocol,
    method: z.string().min(1),
    path: z.string().describe('path (and query) the harness requested'),
    upstream_path: z.string().describe('path (and query) actually forwarded upstream'),
    started_at: IsoTimestamp,
    first_byte_at: IsoTimestamp.nullable(),
    ended_at: IsoTimestamp.nullable(),
    http_status: z.number().int().nullable(),
    participant_id: z.string().nullable(),
    native_identity: NativeIdentity,
    request_model: z.string().nullable(),
    response_model: z.string().nullable(),
    response_id: z.string().nullable(),
    context: z.unknown().describe('the complete request body actually forwarded, decoded JSON'),
    output: z.unknown().describe("the response reassembled in the protocol's own shape"),
    usage: CallUsage,
    tool_refs: z.array(ToolRef),
    response_path: z.string().nullable().describe('raw response file under raw/; null after cleanup'),
    dropped_request_headers: z.array(z.string()).describe('names only; values are never written'),
    execution_status: ExecutionStatus,
    response_capture_status: ResponseCaptureStatus,
    identity_status: IdentityStatus,
    capture_status: CaptureStatus,
    export_status: ExportStatus,
    status_reasons: StatusReasons,
    errors: z.array(RecordedError),
    token_ids: CallTokenIds.optional(),
    logprobs: z
      .strictObject({ content: z.array(z.record(z.string(), z.unknown())) })
      .nullable()
      .optional()
      .describe("the completion's log-probabilities as the server sent them ({token, logprob, bytes?, top_logprobs?} per token; from SGLang's meta_info: {token, token_id, logprob}), taken out of output"),
  })
  .describe('roller.call/v1: one actual HTTP model request and its response (calls.jsonl)');
export type Call = z.infer<typeof Call>;
