import { join } from 'node:path';
import { runPipeline } from '../core/run-pipeline.js';
import type { RunReport, Sink } from '../core/stage.js';
import type { Call } from '../schemas/call.js';
import { createCallsJsonlSink } from '../sinks/calls-jsonl/sink.js';
import { createToolsCaptureSink } from '../sinks/tools-capture/sink.js';
import { createWireTraceSink, type WireTraceMode } from '../sinks/wire-trace/sink.js';
import { projectCalls } from '../sources/proxy/project-calls.js';
import { readWireFrames } from '../sources/proxy/wire-frames.js';
import { WIRE_LOG_FILE, type WireFollow } from '../sources/proxy/wire-log.js';

/** What projecting one capture directory's wire log needs (plain data: it crosses to the projection's process). */
export interface ProjectionJob {
  /** The capture directory: its raw/wire.frames is read, its calls.jsonl and traces are written. */
  outDir: string;
  wireTrace: WireTraceMode;
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
}

/** The sinks of the proxy pipeline: calls.jsonl (+ wire_trace.jsonl, tools_capture.jsonl). */
export function proxySinks(outDir: string, wireTrace: WireTraceMode): Sink<Call>[] {
  // No sha256 while writing: the standalone proxy publishes no manifest (the capture layer hashes at publish).
  const sinks: Sink<Call>[] = [createCallsJsonlSink({ path: join(outDir, 'calls.jsonl'), sha256: false })];
  if (wireTrace !== 'off') {
    sinks.push(createWireTraceSink({ path: join(outDir, 'wire_trace.jsonl'), mode: wireTrace }));
    sinks.push(createToolsCaptureSink({ path: join(outDir, 'tools_capture.jsonl') }));
  }
  return sinks;
}

export function wireLogOf(outDir: string): string {
  return join(outDir, WIRE_LOG_FILE);
}

/**
 * A capture directory's wire log projected into its calls.jsonl and traces: following a log still being written
 * (`follow`: the proxy's progress), or once over a finished one (`roller project-wire`, after a projection stopped).
 */
export function projectWireLog(job: ProjectionJob, follow?: WireFollow): Promise<RunReport> {
  return runPipeline({
    name: 'proxy',
    source: (ctx) =>
      projectCalls(readWireFrames(wireLogOf(job.outDir), { ...(follow ? { follow } : {}), signal: ctx.signal }), {
        responsePath: WIRE_LOG_FILE,
        ...(job.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: job.maxJsonResponseBytes }),
        ...(job.maxEventBytes === undefined ? {} : { maxEventBytes: job.maxEventBytes }),
      }),
    sinks: proxySinks(job.outDir, job.wireTrace),
  });
}
