import { fork } from 'node:child_process';
import { setPriority } from 'node:os';
import { compiledScript } from '../core/compiled-script.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import type { RunReport } from '../core/stage.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';
import { proxyHeaders } from '../harnesses/index.js';
import { startRecordingProxy as startBareProxy, type RecordingProxy, type RecordingProxyOptions } from '../sources/proxy/recording-proxy.js';
import type { WireFollow } from '../sources/proxy/wire-log.js';
import type { ProjectionJob } from './proxy-projection.js';
import type { FromProjector, ToProjector } from './proxy-projector.js';

export { projectWireLog, proxySinks } from './proxy-projection.js';

/**
 * The recording proxy (sources/proxy/recording-proxy.ts) recording the registered harnesses' identity headers
 * (their adapters' identityHeaders) unless the options name their own.
 */
export function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  return startBareProxy({ ...proxyHeaders(), ...options });
}

export interface ProxyPipelineOptions extends Omit<RecordingProxyOptions, 'outDir'> {
  outDir: string;
  wireTrace: WireTraceMode;
}

export interface RunningProxyPipeline {
  proxy: RecordingProxy;
  /**
   * Resolves when the proxy was closed and every file is complete; rejects with the wire log's failure, if any, or
   * the projection's.
   */
  done: Promise<RunReport>;
}

/**
 * `roller proxy`: the recording proxy, and the projection of its wire log into calls.jsonl and traces as the log is
 * written — in a child process at a lower priority (proxy-projector.ts), so the forwarding process holds only what
 * it forwards. A library user wanting the calls in their own process reads `proxy.calls` of startRecordingProxy.
 */
export async function startProxyPipeline(options: ProxyPipelineOptions): Promise<RunningProxyPipeline> {
  const proxy = await startRecordingProxy(options);
  const job: ProjectionJob = {
    outDir: options.outDir,
    wireTrace: options.wireTrace,
    ...(options.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: options.maxJsonResponseBytes }),
    ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
  };
  const done = projectInChild(job, proxy.wireProgress).then((report) => {
    if (proxy.failure) throw proxy.failure;
    return report;
  });
  // A projection that stops never stops the forwarding: the wire log keeps recording, and project-wire redoes it.
  done.catch(() => undefined); // the caller awaits it (roller proxy says it at once)
  return { proxy, done };
}

function projectInChild(job: ProjectionJob, progress: WireFollow): Promise<RunReport> {
  return new Promise((resolve, reject) => {
    // No inherited Node options: the script is compiled JavaScript, and a parent's loader or --input-type is not its.
    // Nor roller's environment, where a model key may be: the projection needs none of it.
    const env = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'].flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]!]])));
    const child = fork(compiledScript(import.meta.url, 'proxy-projector.js'), [JSON.stringify(job)], { execArgv: [], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let outcome: FromProjector | undefined;
    child.once('message', (m: FromProjector) => (outcome = m));
    child.once('spawn', () => {
      try {
        setPriority(child.pid!, 10); // forwarding comes first on a busy machine; the projection catches up between calls
      } catch {
        // not permitted here: the same priority, still another process
      }
      void report(child, progress);
    });
    child.once('error', (err) => reject(projectionFailed(job, err.message)));
    child.once('exit', (code, signal) => {
      if (outcome?.ok) resolve(outcome.report);
      else if (outcome) reject(projectionFailed(job, outcome.message, outcome.code as ErrorCode));
      else reject(projectionFailed(job, signal ? `killed by ${signal}` : `exited with code ${code}`));
    });
  });
}

/** Tell the child how far the log is on disk after every write (one message in flight: the latest is what counts). */
async function report(child: ReturnType<typeof fork>, progress: WireFollow): Promise<void> {
  let sent = -1;
  while (child.connected) {
    const message: ToProjector = { committed: progress.committedBytes, closed: progress.closed };
    if (message.committed !== sent || message.closed) {
      sent = message.committed;
      const delivered = await new Promise<boolean>((resolve) => child.send(message, (err) => resolve(!err)));
      if (!delivered || message.closed) return;
      if (progress.committedBytes !== sent || progress.closed) continue;
    }
    await progress.changed();
  }
}

function projectionFailed(job: ProjectionJob, why: string, code: ErrorCode = ErrorCode.SINK_WRITE_FAILED): RollerError {
  const again = `roller project-wire ${job.outDir}${job.wireTrace === 'off' ? '' : ` --wire-trace ${job.wireTrace}`}`;
  return new RollerError(code, `the projection of the wire log into ${job.outDir}'s calls.jsonl stopped: ${why}. The wire log holds every call: once that is mended, \`${again}\` projects it again`);
}
