import { createHash } from 'node:crypto';
import { open } from './thread-fs.js';
import { giveBackScratch, takeScratch } from './scratch-buffers.js';

/** sha256 and size of a file, read in chunks into a reused buffer (never whole, never into fresh memory). */
export async function sha256File(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const handle = await open(path, 'r');
  const buf = takeScratch();
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } finally {
    giveBackScratch(buf);
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}
