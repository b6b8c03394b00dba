import { z } from 'zod';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import { mapStage } from '../../core/compose.js';
import { EncodedLine } from '../../core/encoded-line.js';
import { encodeWithContext, fieldsOf } from '../../schemas/call-context.js';

export const CallsJsonlOptions = z
  .strictObject({
    path: z.string().min(1).describe('calls.jsonl path'),
    sha256: z.boolean().default(true).describe('hash the file while writing (for the manifest)'),
  })
  .describe('one roller.call/v1 record per line');
export type CallsJsonlOptions = z.input<typeof CallsJsonlOptions>;

export function createCallsJsonlSink(options: CallsJsonlOptions, open?: OpenOutput): Sink<Call> {
  const o = CallsJsonlOptions.parse(options);
  const jsonl = createJsonlSink<EncodedLine>({ path: o.path, sha256: o.sha256, name: 'calls-jsonl', ...(open ? { open } : {}) });
  return {
    name: 'calls-jsonl',
    consume(input, ctx) {
      return jsonl.consume(mapStage('encode-call', encodeCallLine)(input, ctx), ctx);
    },
  };
}

/** A call as one JSONL line; the request context is spliced in as sent when the proxy kept its text. */
export function encodeCallLine(call: Call): EncodedLine {
  return new EncodedLine(encodeWithContext(call, fieldsOf(call), 'context'));
}
