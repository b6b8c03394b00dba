import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { throwIfAborted } from './abort.js';
import { ErrorCode, RollerError } from './errors.js';

export interface WrittenFile {
  path: string;
  bytes: number;
  sha256: string;
}

export interface AtomicWriteOptions {
  signal?: AbortSignal;
  /** fsync the file and its directory (default true): after a crash a reader sees the old or the new file. */
  durable?: boolean;
}

type Content = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

function isIterable(x: unknown): x is Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array> {
  return typeof x === 'object' && x !== null && (Symbol.asyncIterator in x || Symbol.iterator in x);
}

/**
 * Writes `content` to a temporary file beside `path`, fsyncs it, and renames it over `path`. A reader
 * never sees a half-written file; a crash leaves the previous complete version. The sha256 is computed
 * from the bytes as they are written, so no second read is needed. Content may be streamed in
 * sections (an async iterable) so that large documents are never one string in memory.
 */
export async function writeFileAtomic(path: string, content: Content, options: AtomicWriteOptions = {}): Promise<WrittenFile> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const hash = createHash('sha256');
  let bytes = 0;
  const handle = await open(temp, 'wx');
  let renamed = false;
  try {
    const write = async (piece: string | Uint8Array) => {
      if (options.signal) throwIfAborted(options.signal);
      const buf = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
      hash.update(buf);
      bytes += buf.length;
      let off = 0;
      while (off < buf.length) {
        const { bytesWritten } = await handle.write(buf, off, buf.length - off);
        off += bytesWritten;
      }
    };
    if (typeof content === 'string' || content instanceof Uint8Array) await write(content);
    else if (isIterable(content)) for await (const piece of content) await write(piece);
    if (options.durable ?? true) await handle.sync();
    await handle.close();
    await rename(temp, path);
    renamed = true;
    if (options.durable ?? true) await syncDirectory(dir);
    return { path, bytes, sha256: hash.digest('hex') };
  } catch (cause) {
    if (cause instanceof RollerError || options.signal?.aborted) throw cause;
    throw new RollerError(
      ErrorCode.ATOMIC_WRITE_FAILED,
      `writing ${path} failed (${(cause as Error).message}); the previous version, if any, is unchanged`,
      { cause },
    );
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {}); // already closed on the success path before rename
      await rm(temp, { force: true });
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (err) {
    // Some filesystems refuse fsync on a directory (EINVAL/EISDIR); the rename is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EBADF') throw err;
  } finally {
    await handle.close();
  }
}

/** A JSON document written atomically, pretty-printed with a trailing newline. */
export function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions & { indent?: number } = {}): Promise<WrittenFile> {
  return writeFileAtomic(path, `${JSON.stringify(value, null, options.indent ?? 2)}\n`, options);
}
