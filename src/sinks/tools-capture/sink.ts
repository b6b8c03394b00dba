import { z } from 'zod';
import { mapStage } from '../../core/compose.js';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import { head } from '../wire-trace/sink.js';

type Json = Record<string, any>;

export const ToolsCaptureOptions = z.strictObject({ path: z.string().min(1).describe('tools_capture.jsonl path') }).describe('per-request tool snapshots of Responses calls');
export type ToolsCaptureOptions = z.input<typeof ToolsCaptureOptions>;

/** Every Responses request's full tool list (Codex ACTF needs the per-request snapshots). */
export function createToolsCaptureSink(options: ToolsCaptureOptions, open?: OpenOutput): Sink<Call> {
  const o = ToolsCaptureOptions.parse(options);
  const jsonl = createJsonlSink<Json>({ path: o.path, name: 'tools-capture', sha256: false, ...(open ? { open } : {}) });
  return {
    name: 'tools-capture',
    consume(input, ctx) {
      const pick = mapStage('tools-capture', (call: Call): Json | undefined => {
        // The protocol first: reading a context that is still bytes parses it.
        if (call.protocol !== 'openai-responses') return undefined;
        const tools = (call.context as Json | null)?.tools;
        return Array.isArray(tools) ? { ...head(call), tools } : undefined;
      });
      return jsonl.consume(pick(input, ctx), ctx);
    },
  };
}
