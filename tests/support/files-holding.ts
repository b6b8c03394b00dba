import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The regular files under `roots` whose bytes hold `needle`. Each walk stays on its root's filesystem: a mount under it
 * (a dockerd's nsfs netns file, a tmpfs) is another program's, and reading an nsfs file is EINVAL. A file that
 * vanishes mid-walk (another test's temp file) is skipped; any other read error is thrown, never a silent pass.
 */
export function filesHolding(needle: string, roots: string[]): string[] {
  const found: string[] = [];
  const bytes = Buffer.from(needle);
  const walk = (path: string, dev: number): void => {
    let st;
    try {
      st = lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (st.dev !== dev) return;
    if (st.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const name of names) walk(join(path, name), dev);
    } else if (st.isFile()) {
      try {
        if (holds(path, bytes)) found.push(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  for (const root of roots) {
    try {
      walk(root, lstatSync(root).dev);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return found;
}

/** Reads in 1 MB chunks, each overlapping the last by the needle's length less one: big files stay out of memory. */
function holds(path: string, needle: Buffer): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc((1 << 20) + needle.length);
    let kept = 0;
    for (;;) {
      const n = readSync(fd, buf, kept, buf.length - kept, null);
      if (n === 0) return false;
      const filled = kept + n;
      if (buf.subarray(0, filled).includes(needle)) return true;
      kept = Math.min(needle.length - 1, filled);
      buf.copy(buf, 0, filled - kept, filled);
    }
  } finally {
    closeSync(fd);
  }
}
