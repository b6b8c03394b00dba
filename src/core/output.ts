import { closeSync, createWriteStream, openSync, writevSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { mkdir, syncFileIo } from './thread-fs.js';

/**
 * How sinks open their files. Injectable so that tests (and users) can hand a sink a stalling,
 * failing or in-memory destination without touching the sink's code.
 */
export type OpenOutput = (path: string) => Promise<Writable> | Writable;

export const DEFAULT_WRITE_HIGH_WATER_MARK = 1 << 20;

/** A file for a sink: a WriteStream (the thread pool) on the main thread, a SyncFileWritable in a worker (thread-fs.ts). */
export const openFileOutput: OpenOutput = async (path) => {
  await mkdir(dirname(path), { recursive: true });
  if (syncFileIo) return new SyncFileWritable(path);
  const stream = createWriteStream(path, { flags: 'w', highWaterMark: DEFAULT_WRITE_HIGH_WATER_MARK });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  return stream;
};

/** Gathered up to this many bytes (or buffers) before one writev. */
const BATCH_BYTES = 256 << 10;
const BATCH_BUFFERS = 512;

/**
 * A file written with synchronous writev calls, for worker threads (see thread-fs.ts): chunks are gathered
 * (as they are, no copy) and written in batches — when a batch is full, when the event loop next turns (so a
 * live file, the proxy's calls.jsonl, is as current as with a WriteStream), and when the stream ends. A failed
 * write is the stream's error, as with a WriteStream.
 */
export class SyncFileWritable extends Writable {
  private fd: number;
  private batch: Uint8Array[] = [];
  private batchBytes = 0;
  private flushScheduled = false;

  constructor(path: string) {
    super({ highWaterMark: DEFAULT_WRITE_HIGH_WATER_MARK });
    this.fd = openSync(path, 'w');
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    this.flushIfFull(callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    for (const c of chunks) {
      this.batch.push(c.chunk);
      this.batchBytes += c.chunk.length;
    }
    this.flushIfFull(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      this.flush();
      this.closeFd();
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    try {
      this.closeFd();
    } catch {
      // the stream's own error, if any, is the one reported
    }
    callback(error);
  }

  private flushIfFull(callback: (error?: Error | null) => void): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        if (this.fd < 0 || this.destroyed) return;
        try {
          this.flush();
        } catch (err) {
          this.destroy(err as Error);
        }
      });
    }
    try {
      if (this.batchBytes >= BATCH_BYTES || this.batch.length >= BATCH_BUFFERS) this.flush();
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    let left = this.batchBytes;
    let buffers = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    while (left > 0) {
      const n = writevSync(this.fd, buffers);
      left -= n;
      if (left > 0) buffers = unwritten(buffers, n);
    }
  }

  private closeFd(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    closeSync(fd);
  }
}

/** The buffers after the first `written` bytes of them (a short writev). */
function unwritten(buffers: Uint8Array[], written: number): Uint8Array[] {
  let i = 0;
  while (written >= buffers[i]!.length) written -= buffers[i++]!.length;
  return [buffers[i]!.subarray(written), ...buffers.slice(i + 1)];
}
