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
  /** Resolves when the proxy was closed and every file is complete. */
  done: Promise<RunReport>;
}

/** `roller proxy`: the recording proxy feeding calls.jsonl (+ wire_trace.jsonl, tools_capture.jsonl). */
export async function startProxyPipeline(options: ProxyPipelineOptions): Promise<RunningProxyPipeline> {
  const proxy = await startRecordingProxy(options);
  // No sha256 while writing: the standalone proxy publishes no manifest (the capture layer hashes at publish).
  const sinks: Sink<Call>[] = [createCallsJsonlSink({ path: join(options.outDir, 'calls.jsonl'), sha256: false })];
  if (options.wireTrace !== 'off') {
    sinks.push(createWireTraceSink({ path: join(options.outDir, 'wire_trace.jsonl'), mode: options.wireTrace }));
    sinks.push(createToolsCaptureSink({ path: join(options.outDir, 'tools_capture.jsonl') }));
  }
  const done = runPipeline({ name: 'proxy', source: proxy.calls, sinks });
  done.catch(() => void proxy.close());
  return { proxy, done };
}
