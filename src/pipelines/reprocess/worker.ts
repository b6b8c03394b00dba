/**
 * A reprocess worker thread: projects the samples it is sent, one at a time, and answers each with its
 * outcome. Samples are independent, so N workers use N cores (parsing is CPU-bound).
 */
import { parentPort } from 'node:worker_threads';
import { reprocessSample, type SampleJob, type SampleOutcome } from './sample.js';

export type WorkerRequest = { id: number; job: SampleJob };
export type WorkerReply = { id: number; outcome: SampleOutcome };

parentPort!.on('message', (m: WorkerRequest) => {
  void reprocessSample(m.job).then((outcome) => parentPort!.postMessage({ id: m.id, outcome } satisfies WorkerReply));
});
