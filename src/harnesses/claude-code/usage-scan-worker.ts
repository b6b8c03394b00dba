import { parentPort, workerData } from 'node:worker_threads';
import { scanFiles } from './usage-scan.js';

/** A worker thread of scanUsage: scans its share of the files and posts the result. */
const { files } = workerData as { files: string[] };
parentPort!.postMessage(await scanFiles(files));
