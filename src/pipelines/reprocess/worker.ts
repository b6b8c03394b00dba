/**
 * A reprocess worker thread: projects the samples it is sent, one at a time, and answers each with its
 * outcome. Samples are independent, so N workers use N cores (parsing is CPU-bound).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { ReadArena } from '../../core/read-arena.js';
import { reprocessSample, type SampleJob, type SampleOutcome } from './sample.js';
import { ErrorCode } from '../../core/errors.js';

// A full GC after a sample only past GC_ABOVE_RSS: a safety net, not a routine (a lower line made every sample end in
// one, costing more than it saved: bench/reprocess/README.md). Worker execArgv takes no V8 flags, hence the flag set
// at run time and `gc` taken from a context created after it.
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
      outcome = { status: 'error', error: { code: ErrorCode.REPROCESS_FAILED, message: `${m.job.source}: ${(err as Error).message}` } };
    }
    if (process.memoryUsage.rss() > GC_ABOVE_RSS) gc();
    parentPort!.postMessage({ id: m.id, outcome } satisfies WorkerReply);
  });
});
