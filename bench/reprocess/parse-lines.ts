import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/** split on '\n' + JSON.parse of every line of a buffer: what any JSONL reader pays for these bytes. */
export function parseLines(buf: Buffer): void {
  let start = 0;
  for (let nl = buf.indexOf(10); ; nl = buf.indexOf(10, start)) {
    const end = nl === -1 ? buf.length : nl;
    if (end > start) JSON.parse(buf.toString('utf8', start, end));
    if (nl === -1) break;
    start = nl + 1;
  }
}

// As a worker (the two-thread parse limit): parse the files given, answer with their bytes.
if (!isMainThread && parentPort && Array.isArray(workerData)) {
  let bytes = 0;
  for (const f of workerData as string[]) {
    const buf = readFileSync(f);
    parseLines(buf);
    bytes += buf.length;
  }
  parentPort.postMessage(bytes);
}
