import { z } from 'zod';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';

export const TraceOptions = z
  .strictObject({ path: z.string().min(1).describe('trace.jsonl path') })
  .describe("trace.jsonl (seeds/003 §4.1): the harness's native records as read, one per line, in its own schema");
export type TraceOptions = z.input<typeof TraceOptions>;

export function createTraceSink(options: TraceOptions, open?: OpenOutput): Sink<unknown> {
  const o = TraceOptions.parse(options);
  return createJsonlSink<unknown>({ path: o.path, name: 'trace', ...(open ? { open } : {}) });
}
