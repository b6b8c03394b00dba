/**
 * The child process of `startProxyPipeline`: it follows the wire log a recording proxy writes and projects it into
 * calls.jsonl and the wire traces. Apart from the proxy so that the projection's memory (a 60 MB request parsed) and
 * CPU (decoding every response) are never the forwarding process's, and a projection that dies loses nothing: the
 * wire log is the record, and `roller project-wire` projects it again.
 */
import { statSync } from 'node:fs';
import { ErrorCode, isRollerError } from '../core/errors.js';
import type { RunReport } from '../core/stage.js';
import type { WireFollow } from '../sources/proxy/wire-log.js';
import { projectWireLog, wireLogOf, type ProjectionJob } from './proxy-projection.js';

/** The proxy tells how far the log is on disk, and when it is closed. */
export interface ToProjector {
  committed: number;
  closed: boolean;
}

export type FromProjector = { ok: true; report: RunReport } | { ok: false; code: string; message: string };

/** The writer's progress as the proxy reports it over IPC; the proxy gone, the log on disk is all there is. */
class ReportedProgress implements WireFollow {
  committedBytes = 0;
  closed = false;
  private waiters: (() => void)[] = [];

  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  update(committed: number, closed: boolean): void {
    this.committedBytes = Math.max(this.committedBytes, committed);
    this.closed ||= closed;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

async function main(job: ProjectionJob): Promise<FromProjector> {
  const progress = new ReportedProgress();
  process.on('message', (m: ToProjector) => progress.update(m.committed, m.closed));
  // The proxy killed (kill -9) or crashed: what it wrote is projected to the end, then this process ends too — also
  // when it was gone before this process got this far.
  const orphaned = () => progress.update(sizeOf(wireLogOf(job.outDir)), true);
  process.on('disconnect', orphaned);
  if (!process.connected) orphaned();
  try {
    return { ok: true, report: await projectWireLog(job, progress) };
  } catch (err) {
    return { ok: false, code: isRollerError(err) ? err.code : ErrorCode.SINK_WRITE_FAILED, message: (err as Error).message };
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no log at all: nothing to project
  }
}

if (process.send) {
  // Ctrl-C reaches the whole process group: the proxy decides when the log ends, and this process follows it there.
  // Once the proxy is gone, a signal ends this process as usual.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.connected || process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  const outcome = await main(JSON.parse(process.argv[2]!) as ProjectionJob);
  if (process.connected) process.send(outcome, () => process.disconnect());
  process.exitCode = outcome.ok ? 0 : 1;
}
