import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/**
 * Memory bandwidth, the other ceiling of a 2-way speed-up: copy a buffer larger than any cache `rounds` times;
 * answers the bytes copied. Reprocess moves every byte of an archive several times (page cache to the read
 * buffer, views to output lines, output to the page cache), so two threads of it cannot gain more than two
 * threads of this do.
 */
export function copyRounds(rounds: number): number {
  const from = Buffer.alloc(64 << 20, 1);
  const to = Buffer.allocUnsafe(64 << 20);
  for (let i = 0; i < rounds; i++) from.copy(to);
  return rounds * from.length;
}

if (!isMainThread && parentPort && typeof (workerData as { copyRounds?: number } | null)?.copyRounds === 'number') {
  parentPort.postMessage(copyRounds((workerData as { copyRounds: number }).copyRounds));
}
