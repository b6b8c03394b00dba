/**
 * A reprocess worker thread: projects the samples it is sent, one at a time, and answers each with its
 * outcome. Samples are independent, so N workers use N cores (parsing is CPU-bound).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { ReadArena } from '../../core/read-arena.js';
import { reprocessSample, type SampleJob, type SampleOutcome } from './sample.js';

// A full GC after a sample only when the process is past GC_ABOVE_RSS: a safety net, not a routine. What a
// sample holds between samples is its worker's arena (the size of its calls.jsonl), the scratch buffers and a V8
// heap of 25-30 MB; what it leaves behind V8 collects on its own. Measured at --concurrency 2 (two workers, so the
// process sits at 150-175 MB between samples): with the line at 130 MB every sample of both workers ended in a full
// GC (mark-compact was most of the CPU that two workers spend over one), and the 1 GB bench archive took 4.3-4.5 s
// against 3.9-4.2 s without it, the 4 GB one 18.2-19.4 s against 15.0-16.7 s; peak RSS 158-164 MB with it,
// 174-188 MB without, at 1 GB and 4 GB alike. At 180 MB the line is crossed only if something grows past that.
// Worker execArgv takes no V8 flags, hence the flag set at run time and `gc` taken from a context created after it.
const GC_ABOVE_RSS = 180 * 2 ** 20;
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export type WorkerRequest = { id: number; job: SampleJob };
export type WorkerReply = { id: number; outcome: SampleOutcome };

// One sample at a time per worker (the pool sends one job per worker; a second one waits here all the same),
// so the arena's views of one sample are dead when the next one resets it.
const readArena = new ReadArena();
let queue: Promise<void> = Promise.resolve();

parentPort!.on('message', (m: WorkerRequest) => {
  queue = queue.then(async () => {
    readArena.reset();
    let outcome: SampleOutcome;
    try {
      outcome = await reprocessSample(m.job, { readArena });
    } catch (err) {
      // reprocessSample answers its own errors; this is a bug outside it. Answer anyway, so the pool never waits
      // for a reply that will not come and the next sample still runs.
      outcome = { status: 'error', error: { code: 'ROLLER_REPROCESS_FAILED', message: `${m.job.source}: ${(err as Error).message}` } };
    }
    if (process.memoryUsage.rss() > GC_ABOVE_RSS) gc();
    parentPort!.postMessage({ id: m.id, outcome } satisfies WorkerReply);
  });
});
