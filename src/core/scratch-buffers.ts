/**
 * 1 MB buffers for transient I/O (encoding a document for a write, a file's chunks while it is hashed or
 * split into lines), reused from one use to the next instead of allocated per file.
 *
 * Why: a fresh buffer is fresh memory, every page of it faulted in — on a VM far dearer than touching a warm page
 * again (figures in bench/reprocess/README.md).
 *
 * A buffer is the taker's until it gives it back; a few are kept per thread (each worker has its own).
 */
export const SCRATCH_BYTES = 1 << 20;
const KEPT = 8;
const spare: Buffer[] = [];

export function takeScratch(): Buffer {
  return spare.pop() ?? Buffer.allocUnsafeSlow(SCRATCH_BYTES);
}

export function giveBackScratch(buf: Buffer): void {
  if (buf.length === SCRATCH_BYTES && spare.length < KEPT && !spare.includes(buf)) spare.push(buf);
}
