import { close, fstat, fsync, open, writev, writevSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { FrameKind } from './wire-format.js';

export * from './wire-format.js';

/** What a reader following a log that is still being written needs of its writer (same thread). */
export interface WireFollow {
  /** Bytes of the log on disk so far (a follower reads no further). */
  readonly committedBytes: number;
  /** The writer is closed: nothing more will come. */
  readonly closed: boolean;
  /** Resolves after the next completed write, or the close. */
  changed(): Promise<void>;
}

export interface WireLogOptions {
  /** Bytes that may wait for the disk before `backedUp` says so (default 16 MB). */
  highWaterBytes?: number;
  /** Called once, at once, when a write fails: nothing appended after it is recorded. */
  onFailure?(err: RollerError): void;
}

const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const fstatAsync = promisify(fstat);
const openAsync = promisify(open);

/**
 * The writer of the wire log (its format: wire-format.ts): frames are queued as buffers (bodies as they are, never
 * copied) and written with one writev for everything queued while the previous write was out — writes coalesce under
 * load without a timer. `backedUp` and `drained()` are the backpressure: the proxy pauses upstream reads while more
 * than the high-water mark waits for the disk. A failed write (a full disk) fails the log for good: `failure` is set,
 * `onFailure` is told, whoever waits on `flushed()` is rejected, and nothing later is written after the gap.
 */
export class WireLogWriter implements WireFollow {
  committedBytes: number;
  closed = false;
  /** Bytes appended so far (header lines and bodies). */
  private appendedBytes: number;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private writing = false;
  private failed: RollerError | undefined;
  private closing: Promise<void> | undefined;
  private changeWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  /** flushed() callers: resolved once the log is on disk up to `upTo`. */
  private flushWaiters: { upTo: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  private constructor(
    readonly path: string,
    private readonly fd: number,
    size: number,
    private readonly options: WireLogOptions,
  ) {
    this.committedBytes = size;
    this.appendedBytes = size;
  }

  /** Opens (creating it owner-only, or appending to it) the log at `path`. */
  static async open(path: string, options: WireLogOptions = {}): Promise<WireLogWriter> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const fd = await openAsync(path, 'a', 0o600);
    return new WireLogWriter(path, fd, (await fstatAsync(fd)).size, options);
  }

  get failure(): RollerError | undefined {
    return this.failed;
  }

  /** More than the high-water mark waits for the disk. */
  get backedUp(): boolean {
    return this.queuedBytes > (this.options.highWaterBytes ?? 16 << 20);
  }

  /** Appends one frame (its body in one buffer or several, not copied). After a failure (or close) nothing is appended. */
  append(callId: string, kind: FrameKind, meta?: object, body?: Buffer | readonly Buffer[]): void {
    if (this.failed || this.closing) return;
    const parts = body === undefined ? [] : Buffer.isBuffer(body) ? [body] : body;
    let n = 0;
    for (const p of parts) n += p.length;
    const header = Buffer.from(`${JSON.stringify({ c: callId, k: kind, n, m: meta })}\n`, 'utf8');
    this.queue.push(header);
    for (const p of parts) if (p.length > 0) this.queue.push(p);
    this.queue.push(NEWLINE);
    const bytes = header.length + n + 1;
    this.queuedBytes += bytes;
    this.appendedBytes += bytes;
    this.kick();
  }

  /** Resolves when the log is under its high-water mark again (at once when it is, or after a failure). */
  drained(): Promise<void> {
    if (!this.backedUp || this.failed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Resolves when every frame appended so far is written; rejects with the failure when the log cannot be. */
  flushed(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.committedBytes >= this.appendedBytes) return Promise.resolve();
    return new Promise((resolve, reject) => this.flushWaiters.push({ upTo: this.appendedBytes, resolve, reject }));
  }

  /**
   * Writes what is queued at once, in this thread, when no write is out — for a request the proxy holds until its
   * frame is on disk: a page-cache write of a request costs microseconds, a thread-pool round trip ~0.5 ms on a busy
   * machine. false when a write is out (wait on flushed()); throws the failure when the log cannot be written.
   */
  flushNow(): boolean {
    if (this.failed) throw this.failed;
    if (this.writing) return false;
    const [parts, bytes] = this.take();
    if (bytes === 0) return true;
    let written = 0;
    try {
      written = writevSync(this.fd, parts);
    } catch (err) {
      this.fail(err as Error);
    }
    this.wrote(written, bytes);
    if (this.failed) throw this.failed;
    return true;
  }

  changed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.changeWaiters.push(resolve));
  }

  /** Writes what is queued, syncs and closes; rejects with the failure if any write failed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.flushed().catch(() => undefined);
        if (!this.failed) {
          try {
            await fsyncAsync(this.fd);
          } catch (err) {
            this.fail(err as Error);
          }
        }
      } finally {
        await closeAsync(this.fd).catch(() => undefined);
        this.closed = true;
        this.notifyChange();
      }
      if (this.failed) throw this.failed;
    })();
    return this.closing;
  }

  private take(): [Buffer[], number] {
    const taken: [Buffer[], number] = [this.queue, this.queuedBytes];
    this.queue = [];
    this.queuedBytes = 0;
    return taken;
  }

  private kick(): void {
    if (this.writing || this.queue.length === 0 || this.failed) return;
    const [parts, bytes] = this.take();
    this.writing = true;
    writev(this.fd, parts, (err, written) => {
      this.writing = false;
      if (err) this.fail(err);
      this.wrote(written, bytes);
    });
  }

  /** A write of `bytes` completed with `written` of them on disk. */
  private wrote(written: number, bytes: number): void {
    if (this.failed) return;
    // A short write (a full disk) is a failure too: what follows must not land after a gap.
    if (written !== bytes) return this.fail(new Error(`wrote ${written} of ${bytes} bytes (is the disk full?)`));
    this.committedBytes += bytes;
    while (this.flushWaiters.length > 0 && this.flushWaiters[0]!.upTo <= this.committedBytes) this.flushWaiters.shift()!.resolve();
    if (!this.backedUp) for (const w of this.drainWaiters.splice(0)) w();
    this.notifyChange();
    this.kick();
  }

  private fail(cause: Error): void {
    if (this.failed) return;
    this.failed = new RollerError(ErrorCode.WIRE_LOG_WRITE_FAILED, `the wire log ${this.path} cannot be written (${cause.message}); nothing after its first ${this.committedBytes} bytes is recorded — free space or choose another --out`, { cause });
    this.queue = [];
    this.queuedBytes = 0;
    for (const w of this.flushWaiters.splice(0)) w.reject(this.failed);
    for (const w of this.drainWaiters.splice(0)) w();
    this.notifyChange();
    this.options.onFailure?.(this.failed);
  }

  private notifyChange(): void {
    for (const w of this.changeWaiters.splice(0)) w();
  }
}

const NEWLINE = Buffer.from('\n');
