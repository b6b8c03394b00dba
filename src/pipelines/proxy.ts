import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, RollerError } from '../core/errors.js';
import { runPipeline } from '../core/run-pipeline.js';
import type { RunReport, Sink } from '../core/stage.js';
import type { Call } from '../schemas/call.js';
import { createCallsJsonlSink } from '../sinks/calls-jsonl/sink.js';
import { createToolsCaptureSink, createWireTraceSink, type WireTraceMode } from '../sinks/wire-trace/sink.js';
import { startRecordingProxy, type RecordingProxy, type RecordingProxyOptions } from '../sources/proxy/recording-proxy.js';
import type { ProjectorWorkerData, ProjectorWorkerResult } from './proxy-projector-worker.js';
import { startWorker } from '../core/worker-exec-argv.js';

export interface ProxyPipelineOptions extends Omit<RecordingProxyOptions, 'outDir'> {
  outDir: string;
  wireTrace: WireTraceMode;
  /**
   * Where calls are projected from the wire log: 'worker' (default) a worker thread at a lower CPU
   * priority, so that on a busy machine forwarding always comes first and the projection catches up
   * when the model is thinking; 'inline' this thread.
   */
  projection?: 'worker' | 'inline';
  /** The worker's nice value (Linux: per thread). Default 19. */
  projectionNice?: number;
  /**
   * How far (ms) the worker's projection may fall behind while the proxy is busy forwarding (see
   * readWireFrames' yieldTo). Default 5000; 0 projects as soon as bytes land.
   */
  projectionMaxLagMs?: number;
}

export interface RunningProxyPipeline {
  proxy: RecordingProxy;
  /** Resolves when the proxy was closed and every file is complete. */
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

/** `roller proxy`: the recording proxy, and the projection of its wire log into calls.jsonl and traces. */
export async function startProxyPipeline(options: ProxyPipelineOptions): Promise<RunningProxyPipeline> {
  const proxy = await startRecordingProxy(options);
  const done =
    options.projection === 'inline'
      ? runPipeline({ name: 'proxy', source: proxy.calls, sinks: proxySinks(options.outDir, options.wireTrace) })
      : runProjectorWorker({
          wirePath: proxy.wirePath,
          progress: proxy.wireProgress,
          outDir: options.outDir,
          wireTrace: options.wireTrace,
          nice: options.projectionNice ?? 19,
          // Quiet = no exchange open and nothing written for 50 ms: between a harness's model calls (seconds of model
          // latency, tool runs) that is most of the time; under a continuous load a gap between two requests is not.
          yieldTo: { quietMs: 50, maxLagMs: options.projectionMaxLagMs ?? 5000 },
          ...(options.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: options.maxJsonResponseBytes }),
          ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
        });
  done.catch(() => void proxy.close());
  return { proxy, done };
}

function runProjectorWorker(data: ProjectorWorkerData): Promise<RunReport> {
  return new Promise((resolve, reject) => {
    // A bounded heap: the projection streams (bases, open exchanges and sink queues are all bounded), and
    // an unbounded worker heap only grows the process's RSS between collections.
    const worker = startWorker(projectorScript(), { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    let result: ProjectorWorkerResult | undefined;
    worker.once('message', (m: ProjectorWorkerResult) => (result = m));
    worker.once('error', (err) => reject(new RollerError(ErrorCode.SINK_WRITE_FAILED, `the projection worker for ${data.wirePath} failed: ${err.message}; the wire log is intact, \`roller reprocess\` can project it again`, { cause: err })));
    worker.once('exit', (code) => {
      if (result?.ok) resolve(result.report);
      else if (result) reject(new RollerError(result.code ?? ErrorCode.SINK_WRITE_FAILED, `projecting calls from ${data.wirePath}: ${result.message}`));
      else reject(new RollerError(ErrorCode.SINK_WRITE_FAILED, `the projection worker for ${data.wirePath} exited (code ${code}) without a result`));
    });
  });
}

/**
 * The compiled worker script. From TypeScript sources (tests), the build's copy in dist/ — a worker
 * thread cannot load .ts.
 */
function projectorScript(): string {
  const here = fileURLToPath(import.meta.url);
  const sibling = here.replace(/\.ts$/, '').replace(/proxy(\.js)?$/, 'proxy-projector-worker.js');
  if (here.endsWith('.js')) return sibling;
  const built = sibling.replace(/([\\/])src([\\/]pipelines[\\/])/, '$1dist$1src$2');
  if (!existsSync(built)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${built} is missing: run \`npm run build\` (the projection worker runs compiled code)`);
  return built;
}
