/**
 * The projection worker of the proxy pipeline: follows the wire log the proxy writes and projects it
 * into calls.jsonl (+ wire traces), at a lower CPU priority than the thread that forwards.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { isRollerError, type ErrorCode } from '../core/errors.js';
import { runPipeline } from '../core/run-pipeline.js';
import type { RunReport } from '../core/stage.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';
import { projectCalls } from '../sources/proxy/project-calls.js';
import { readWireFrames } from '../sources/proxy/wire-frames.js';
import { WIRE_LOG_FILE } from '../sources/proxy/wire-log.js';
import { proxySinks } from './proxy.js';

export interface ProjectorWorkerData {
  wirePath: string;
  progress: Int32Array;
  outDir: string;
  wireTrace: WireTraceMode;
  nice: number;
  /** readWireFrames' yieldTo: how the projection lets forwarding go first. */
  yieldTo: { quietMs: number; maxLagMs: number };
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
}

export type ProjectorWorkerResult = { ok: true; report: RunReport } | { ok: false; message: string; code?: ErrorCode };

async function main(d: ProjectorWorkerData): Promise<ProjectorWorkerResult> {
  try {
    // Linux keeps a nice value per thread: this lowers the projection only, never the forwarding thread.
    setPriority(d.nice);
  } catch {
    // not permitted or not supported: the projection runs at the process's priority
  }
  try {
    const report = await runPipeline({
      name: 'proxy',
      source: (ctx) =>
        projectCalls(readWireFrames(d.wirePath, { follow: d.progress, signal: ctx.signal, yieldTo: d.yieldTo }), {
          responsePath: WIRE_LOG_FILE,
          ...(d.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: d.maxJsonResponseBytes }),
          ...(d.maxEventBytes === undefined ? {} : { maxEventBytes: d.maxEventBytes }),
        }),
      sinks: proxySinks(d.outDir, d.wireTrace),
    });
    return { ok: true, report };
  } catch (err) {
    return { ok: false, message: (err as Error).message, ...(isRollerError(err) ? { code: err.code } : {}) };
  }
}

if (parentPort) parentPort.postMessage(await main(workerData as ProjectorWorkerData));
