import { parentPort } from 'node:worker_threads';
import { scanShare, type ScanShare } from './usage-scan.js';

/** A worker thread of scanUsage: started early, it takes units from the shared list until none is left. */
parentPort!.once('message', (share: ScanShare) => {
  parentPort!.postMessage(scanShare(share));
});
