import { open } from './thread-fs.js';
import { giveBackScratch, takeScratch } from './scratch-buffers.js';

/**
 * Whether a file's bytes contain `needle` (UTF-8), read in chunks into a reused buffer: the common "is there
 * anything to do in this file" check without reading the file whole into fresh memory. A missing file
 * contains nothing.
 */
export async function fileIncludes(path: string, needle: string): Promise<boolean> {
  const want = Buffer.from(needle, 'utf8');
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!handle) return false;
  const buf = takeScratch();
  try {
    // The last want.length - 1 bytes of a chunk are carried to the front of the next: a match across the cut.
    const carry = want.length - 1;
    let kept = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, kept, buf.length - kept, null);
      if (bytesRead === 0) return false;
      const end = kept + bytesRead;
      if (buf.subarray(0, end).includes(want)) return true;
      kept = Math.min(carry, end);
      buf.copy(buf, 0, end - kept, end);
    }
  } finally {
    giveBackScratch(buf);
    await handle.close();
  }
}
