import { join } from 'node:path';
import { runPipeline } from '../core/run-pipeline.js';
import type { RunReport, Sink } from '../core/stage.js';
import type { Call } from '../schemas/call.js';
import { createCallsJsonlSink } from '../sinks/calls-jsonl/sink.js';
import { createToolsCaptureSink, createWireTraceSink, type WireTraceMode } from '../sinks/wire-trace/sink.js';
import { startRecordingProxy, type RecordingProxy, type RecordingProxyOptions } from '../sources/proxy/recording-proxy.js';

export interface ProxyPipelineOptions extends Omit<RecordingProxyOptions, 'outDir'> {
  outDir: string;
  wireTrace: WireTraceMode;
}

export interface RunningProxyPipeline {
  proxy: RecordingProxy;
  /** Resolves when the proxy was closed and every file is complete; rejects with the wire log's failure, if any. */
  done: Promise<RunReport>;
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

/**
 * `roller proxy`: the recording proxy, and the projection of its wire log into calls.jsonl and traces as the log is
 * written (in this thread: at an agent's pace of tens of calls a second it costs a few percent of a core).
 */
export async function startProxyPipeline(options: ProxyPipelineOptions): Promise<RunningProxyPipeline> {
  const proxy = await startRecordingProxy(options);
  const done = runPipeline({ name: 'proxy', source: proxy.calls, sinks: proxySinks(options.outDir, options.wireTrace) });
  done.catch(() => void proxy.close());
  return { proxy, done };
}
