import { parentPort } from 'node:worker_threads';
import { scanFiles } from './usage-scan.js';

/** A worker thread of scanUsage: started early, it waits for its share of the files and posts the result. */
parentPort!.once('message', (files: string[]) => {
  void scanFiles(files).then((scan) => parentPort!.postMessage(scan));
});
