import { z } from 'zod';
import { mapStage } from '../../core/compose.js';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import { EncodedLine } from '../../core/encoded-line.js';
import { encodeWithContext } from '../../schemas/call-context.js';

export const WireTraceMode = z.enum(['off', 'actf', 'full']);
export type WireTraceMode = z.infer<typeof WireTraceMode>;

export const WireTraceOptions = z
  .strictObject({
    path: z.string().min(1).describe('wire_trace.jsonl path'),
    mode: WireTraceMode.describe("full: every request body as forwarded; actf: parameters, message count, and the first system prompt and tools"),
  })
  .describe('wire_trace.jsonl (seeds/003 §5.5), a projection of the calls');
export type WireTraceOptions = z.input<typeof WireTraceOptions>;

type Json = Record<string, unknown>;
const CONVERSATION_KEYS = new Set(['messages', 'input', 'system', 'instructions', 'tools']);

/** The identity and timing fields of a call, before what a trace keeps of its body. */
export function head(call: Call): Json {
  return { seq: call.seq, call_id: call.call_id, protocol: call.protocol, method: call.method, path: call.path, upstream_path: call.upstream_path, started_at: call.started_at };
}

/** The actf projection: no conversation content, only what ACTF needs (parameters, first system and tools). */
function actfProjection(): (call: Call) => Json {
  let systemSeen = false;
  let toolsSeen = false;
  return (call) => {
    const body = (call.context && typeof call.context === 'object' ? call.context : {}) as Json;
    const params = Object.fromEntries(Object.entries(body).filter(([k]) => !CONVERSATION_KEYS.has(k)));
    // Responses accepts a bare string as input: that is one user message.
    const conversation = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : typeof body.input === 'string' ? [body.input] : [];
    const out: Json = { ...head(call), model: body.model ?? null, params, message_count: conversation.length };
    const system = body.system ?? body.instructions;
    if (!systemSeen && system !== undefined && system !== '') {
      systemSeen = true;
      out.system = system;
    }
    if (!toolsSeen && Array.isArray(body.tools) && body.tools.length > 0) {
      toolsSeen = true;
      out.tools = body.tools;
    }
    return out;
  };
}

export function createWireTraceSink(options: WireTraceOptions, open?: OpenOutput): Sink<Call> {
  const o = WireTraceOptions.parse(options);
  const jsonl = createJsonlSink<Json | EncodedLine>({ path: o.path, name: 'wire-trace', sha256: false, ...(open ? { open } : {}) });
  return {
    name: 'wire-trace',
    consume(input, ctx) {
      // full: the body as forwarded, spliced from the proxy's text when it has it (never re-serialized).
      const project = o.mode === 'full' ? (call: Call) => new EncodedLine(encodeWithContext(call, head(call), 'body')) : actfProjection();
      return jsonl.consume(mapStage<Call, Json | EncodedLine>('wire-trace', project)(input, ctx), ctx);
    },
  };
}
