import { createHash } from 'node:crypto';
import { readFileChunks } from './jsonl-source.js';
import { SCRATCH_BYTES } from './scratch-buffers.js';

/** sha256 and size of a file, read in chunks into a reused scratch buffer (never whole, never into fresh memory). */
export async function sha256File(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  // 'async': on the main thread the reads go through the thread pool (thread-fs does them in place in a worker).
  for await (const chunk of readFileChunks(path, SCRATCH_BYTES, 'async')) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}
