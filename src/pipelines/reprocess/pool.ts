import type { Worker } from 'node:worker_threads';
import type { SampleJob, SampleOutcome } from './sample.js';
import type { WorkerReply, WorkerRequest } from './worker.js';
import { startWorker } from '../../core/worker-exec-argv.js';
import { compiledScript } from '../../core/compiled-script.js';
import { ErrorCode } from '../../core/errors.js';

/** A Buffer crosses postMessage as a plain Uint8Array: the outcome's lines as Buffers again (views, no copy). */
function withBuffers(o: SampleOutcome): SampleOutcome {
  if (!o.sftLines) return o;
  const buf = (u: Uint8Array | null) => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength) : null);
  return { ...o, sftLines: { linear: buf(o.sftLines.linear), segments: buf(o.sftLines.segments), subagents: buf(o.sftLines.subagents ?? null) } };
}

/** Where samples are projected: worker threads (SamplePool), or this thread (InThreadPool). */
export interface Projector {
  run(job: SampleJob): Promise<SampleOutcome>;
  close(): Promise<void>;
}

/**
 * Projection in this thread, one sample after another per lane: for a harness a script registered (registerHarness),
 * which roller's worker threads cannot load.
 */
export class InThreadPool implements Projector {
  async run(job: SampleJob): Promise<SampleOutcome> {
    const [{ reprocessSample }, { ReadArena }] = await Promise.all([import('./sample.js'), import('../../core/read-arena.js')]);
    return reprocessSample(job, { readArena: new ReadArena() }).catch((err: Error) => ({ status: 'error' as const, error: { code: ErrorCode.REPROCESS_FAILED, message: `${job.source}: ${err.message}` } }));
  }

  async close(): Promise<void> {}
}

/**
 * N worker threads, each projecting one sample at a time. A worker that dies fails the sample it held (an
 * error outcome, never a hang) and is replaced.
 */
export class SamplePool implements Projector {
  private readonly idle: Worker[] = [];
  private readonly waiting: ((w: Worker) => void)[] = [];
  private readonly all = new Set<Worker>();
  private next = 0;

  constructor(size: number) {
    for (let i = 0; i < size; i++) this.idle.push(this.spawn());
  }

  private spawn(): Worker {
    // A bounded heap per worker (peak memory is N samples' working set), and a young generation far below V8's
    // default but not the smallest (sizes measured in bench/reprocess/README.md).
    const w = startWorker(compiledScript(import.meta.url, 'worker.js'), { resourceLimits: { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 12 } });
    w.unref();
    this.all.add(w);
    return w;
  }

  private async acquire(): Promise<Worker> {
    const w = this.idle.pop() ?? (await new Promise<Worker>((resolve) => this.waiting.push(resolve)));
    w.ref(); // a worker holding a job keeps the process alive; an idle one does not
    return w;
  }

  private release(w: Worker): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(w);
    else {
      w.unref();
      this.idle.push(w);
    }
  }

  async run(job: SampleJob): Promise<SampleOutcome> {
    const w = await this.acquire();
    const id = this.next++;
    return new Promise<SampleOutcome>((resolve) => {
      const onMessage = (m: WorkerReply) => {
        if (m.id !== id) return;
        cleanup();
        this.release(w);
        resolve(withBuffers(m.outcome));
      };
      const onGone = (err: Error | number) => {
        cleanup();
        this.all.delete(w);
        this.release(this.spawn());
        resolve({ status: 'error', error: { code: ErrorCode.REPROCESS_WORKER_DIED, message: `${job.source}: the worker projecting it ${typeof err === 'number' ? `exited (code ${err})` : `failed: ${err.message}`}` } });
      };
      const cleanup = () => {
        w.off('message', onMessage);
        w.off('error', onGone);
        w.off('exit', onGone);
      };
      w.on('message', onMessage);
      w.once('error', onGone);
      w.once('exit', onGone);
      w.postMessage({ id, job } satisfies WorkerRequest);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.all].map((w) => w.terminate()));
  }
}
