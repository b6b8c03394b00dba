import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm } from './thread-fs.js';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { throwIfAborted } from './abort.js';
import { jsonPieces } from './json-pieces.js';
import { giveBackScratch, takeScratch } from './scratch-buffers.js';
import { abortReason, ErrorCode, RollerError } from './errors.js';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { OpenOutput } from './output.js';

export interface WrittenFile {
  path: string;
  bytes: number;
  sha256: string;
}

export interface AtomicWriteOptions {
  signal?: AbortSignal;
  /** fsync the file and its directory (default true): after a crash a reader sees the old or the new file. */
  durable?: boolean;
  /**
   * Where the temporary file's bytes go instead of a file handle (a sink's injectable output: tests hand a stalling
   * or failing one); the rename into place is the same. Without a handle there is no fsync of the file.
   */
  open?: OpenOutput;
}

type Content = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

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
  const out = options.open ? await options.open(temp) : undefined;
  const handle = out ? undefined : await open(temp, 'wx');
  let renamed = false;
  try {
    const writeAll = async (buf: Uint8Array) => {
      hash.update(buf);
      bytes += buf.length;
      if (out) {
        if (!out.write(buf)) await once(out, 'drain', options.signal ? { signal: options.signal } : {});
        return;
      }
      let off = 0;
      while (off < buf.length) {
        const { bytesWritten } = await handle!.write(buf, off, buf.length - off);
        off += bytesWritten;
      }
    };
    const write = async (piece: string | Uint8Array) => {
      if (options.signal) throwIfAborted(options.signal);
      if (typeof piece !== 'string') return writeAll(piece);
      // Encoded into scratch buffers, never a fresh buffer per string (see scratch-buffers.ts).
      const encoded = encodeToScratch([piece]);
      try {
        for (const view of encoded.bytes) await writeAll(view);
      } finally {
        encoded.release();
      }
    };
    if (typeof content === 'string' || content instanceof Uint8Array) await write(content);
    else for await (const piece of content) await write(piece);
    if (out) {
      out.end();
      await finished(out, options.signal ? { signal: options.signal } : {});
    } else {
      if (options.durable ?? true) await handle!.sync();
      await handle!.close();
    }
    await rename(temp, path);
    renamed = true;
    if (!out && (options.durable ?? true)) await syncDirectory(dir);
    return { path, bytes, sha256: hash.digest('hex') };
  } catch (cause) {
    if (options.signal?.aborted) throw abortReason(options.signal); // the abort's own reason, not a wait's AbortError
    if (cause instanceof RollerError) throw cause;
    throw new RollerError(
      ErrorCode.ATOMIC_WRITE_FAILED,
      `writing ${path} failed (${(cause as Error).message}); the previous version, if any, is unchanged`,
      { cause },
    );
  } finally {
    if (!renamed) {
      out?.destroy();
      await handle?.close().catch(() => {}); // already closed on the success path before rename
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

/**
 * A JSON document written atomically, pretty-printed with a trailing newline: the bytes of
 * `${JSON.stringify(value, null, indent)}\n`. Serialized at the call, whole (the caller may change the value
 * once this awaits), but in pieces (jsonPieces) encoded straight into scratch buffers: a large document is never
 * one string nor one fresh buffer.
 */
export async function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions & { indent?: number } = {}): Promise<WrittenFile> {
  const encoded = encodeToScratch(jsonText(value, options.indent ?? 2));
  try {
    return await writeFileAtomic(path, encoded.bytes, options);
  } finally {
    encoded.release();
  }
}

/** A JSON document's text as writeJsonAtomic writes it: indented, with a trailing newline. */
export function* jsonText(value: unknown, indent = 2): Generator<string> {
  yield* jsonPieces(value, indent);
  yield '\n';
}

/**
 * Strings as UTF-8 in as many scratch buffers as they need: `bytes`, the filled views, valid until `release()`
 * gives the buffers back.
 */
function encodeToScratch(pieces: Iterable<string>): { bytes: Buffer[]; release(): void } {
  const scratch = [takeScratch()];
  const release = () => {
    for (const b of scratch) giveBackScratch(b);
  };
  const bytes: Buffer[] = [];
  let buf = scratch[0]!;
  let fill = 0;
  try {
    for (let piece of pieces) {
      for (;;) {
        const { read, written } = utf8.encodeInto(piece, buf.subarray(fill));
        fill += written;
        if (read === piece.length) break;
        // Full (encodeInto never splits a character): the next buffer takes the rest.
        bytes.push(buf.subarray(0, fill));
        buf = takeScratch();
        scratch.push(buf);
        fill = 0;
        piece = piece.slice(read);
      }
    }
  } catch (err) {
    release();
    throw err;
  }
  bytes.push(buf.subarray(0, fill));
  return { bytes, release };
}

const utf8 = new TextEncoder();
