/**
 * The sink registry (STYLE.md §3): a name, its options schema and its factory. Adding a sink touches
 * its own folder and one line here. Third-party sinks need no registration: pass any Sink to runPipeline.
 */
import type { z } from 'zod';
import type { OpenOutput } from '../core/output.js';
import type { Sink } from '../core/stage.js';
import { CallsJsonlOptions, createCallsJsonlSink } from './calls-jsonl/sink.js';
import { createToolsCaptureSink, createWireTraceSink, ToolsCaptureOptions, WireTraceOptions } from './wire-trace/sink.js';

export interface SinkDefinition {
  options: z.ZodType;
  create(options: never, open?: OpenOutput): Sink<never>;
}

export const sinks = {
  'calls-jsonl': { options: CallsJsonlOptions, create: createCallsJsonlSink },
  'wire-trace': { options: WireTraceOptions, create: createWireTraceSink },
  'tools-capture': { options: ToolsCaptureOptions, create: createToolsCaptureSink },
} as const satisfies Record<string, SinkDefinition>;

export * from './calls-jsonl/sink.js';
export * from './wire-trace/sink.js';
