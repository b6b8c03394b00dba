import { close as closeFd, constants as fsConstants, fstat, fsync, ftruncate, open as openFd, writev } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { conversationKey, DeltaWindow } from './body-delta.js';
import { DIRECT_BLOCK, withDirect } from './direct-io.js';
import { writeEndMeta, writeRequestMeta, writeResponseHeadMeta, type RecordedResponseHead } from './frame-json.js';
import { SlabQueue } from './slab-queue.js';
import type { EndMeta, FrameKind, RequestMeta } from './wire-format.js';
import { PROGRESS_COMMITTED_BYTE, PROGRESS_DIRECT, PROGRESS_GENERATION, PROGRESS_CLOSED, PROGRESS_LAST_WRITE_BYTE, PROGRESS_OPEN_EXCHANGES } from './wire-progress.js';

export * from './wire-format.js';
export * from './wire-progress.js';

/** A frame header's text from the call id's closing quote to its length. */
const KIND_TEXT: Readonly<Record<FrameKind, string>> = { q: '","k":"q","n":', r: '","k":"r","n":', d: '","k":"d","n":', x: '","k":"x","n":' };

/** Written at once from this many buffered bytes; below it, within FLUSH_DELAY_MS. */
const FLUSH_BYTES = 512 << 10;
const FLUSH_DELAY_MS = 5;

const fsyncAsync = promisify(fsync);
const closeAsync = promisify(closeFd);
const ftruncateAsync = promisify(ftruncate);
const fstatAsync = promisify(fstat);
const openAsync = (path: string, flags: string | number): Promise<number> => new Promise((resolve, reject) => openFd(path, flags, 0o644, (err, fd) => (err ? reject(err) : resolve(fd))));

/**
 * The writer of the wire log (its format: wire-format.ts), on the request path and nothing else. Frames are packed
 * into slabs and written with one writev per 5 ms or 512 KB (however many exchanges are in flight): each write is a
 * thread-pool round trip, and per-turn writes cost the request path more than everything else roller does on it.
 * `progress` tells readers — in this thread or a worker — that bytes landed: its generation counter moves after every
 * completed write, and its closed flag is set once the last one is on disk. append() returns a promise only when more
 * than `highWaterBytes` wait for the disk; the proxy awaits it, so a slow disk slows the upstream read instead of
 * growing memory.
 *
 * The bytes wait in a SlabQueue (slab-queue.ts). With direct I/O (see open) each write covers whole 4 KB blocks from
 * aligned memory, and the last block goes out padded with zeros and is written again, completed, by the next write;
 * the file is cut to the log's length at close. Readers that follow the log read no further than `committedBytes`.
 */
export class WireLogWriter {
  readonly progress = new Int32Array(new SharedArrayBuffer(32), 0, 4);
  private readonly lastWrite = new Float64Array(this.progress.buffer, PROGRESS_LAST_WRITE_BYTE, 1);
  private readonly committed = new Float64Array(this.progress.buffer, PROGRESS_COMMITTED_BYTE, 1);
  bytes = 0;
  /** Bytes appended and not yet handed to a write. */
  private unflushed = 0;
  /** The frames' bytes in memory until they are written; also the JsonOut the request path's metas are spelled into. */
  private readonly out: SlabQueue;
  private writing = false;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private failure: Error | undefined;
  private readonly window = new DeltaWindow();
  /** `out.appended` when the frame being appended began (its pieces can span slabs). */
  private frameStart = 0;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly highWaterBytes: number,
    /** Direct I/O: writes bypass the page cache (see open). */
    readonly direct: boolean,
    /** Where the next write starts: the file's length at open, then (direct) the start of the last partial block. */
    private fileAt: number,
  ) {
    this.out = new SlabQueue(direct);
    this.committed[0] = fileAt;
    this.progress[PROGRESS_DIRECT] = direct ? 1 : 0;
  }

  /**
   * `direct` (default true; the environment's ROLLER_WIRE_DIRECT=0 turns the default off): write with O_DIRECT where
   * the file system takes it (ext4, xfs, btrfs, tmpfs since Linux 6.6; not some FUSE file systems) and the log is
   * whole blocks long so far, else through the page cache.
   * Why: the log only grows, so every buffered write takes fresh page-cache pages, and on a virtual machine that
   * hands freed memory back to its host each fresh page costs a fault on the host too — ~2 µs per KB here in a bad
   * minute (0.15 in a good one), on the second of two cores the client and the model share. Direct writes go from
   * roller's own reused slabs to the device at ~0.05 µs per KB, and leave the user's page cache alone.
   */
  static async open(path: string, options: { highWaterBytes?: number; direct?: boolean } = {}): Promise<WireLogWriter> {
    await mkdir(dirname(path), { recursive: true });
    const highWater = options.highWaterBytes ?? 16 << 20;
    const directFlags = withDirect(fsConstants.O_WRONLY | fsConstants.O_CREAT);
    if ((options.direct ?? process.env.ROLLER_WIRE_DIRECT !== '0') && directFlags !== undefined) {
      let fd: number | undefined;
      try {
        fd = await openAsync(path, directFlags);
        const { size } = await fstatAsync(fd);
        if (size % DIRECT_BLOCK === 0) return new WireLogWriter(path, fd, highWater, true, size);
      } catch {
        // No direct I/O here (some FUSE file systems, tmpfs before Linux 6.6): buffered writes below.
      }
      // (An existing log ending inside a block, too: the page cache appends to it.)
      if (fd !== undefined) await closeAsync(fd);
    }
    const fd = await openAsync(path, 'a');
    return new WireLogWriter(path, fd, highWater, false, (await fstatAsync(fd)).size);
  }

  get error(): Error | undefined {
    return this.failure;
  }

  /** More is waiting for the disk than the mark allows: new requests wait before they are forwarded. */
  get backedUp(): boolean {
    return this.unflushed > this.highWaterBytes;
  }

  /** The proxy started an exchange (readers that yield to forwarding see it). */
  opened(): void {
    Atomics.add(this.progress, PROGRESS_OPEN_EXCHANGES, 1);
  }

  /** The proxy is done with an exchange. */
  ended(): void {
    Atomics.sub(this.progress, PROGRESS_OPEN_EXCHANGES, 1);
  }

  /** Appends a request frame, delta-encoded against a recent body when that saves bytes. */
  appendRequest(callId: string, meta: RequestMeta, body?: Buffer): Promise<void> | undefined {
    if (this.failure || this.closing) return undefined;
    // The frame's bytes: body[from, to) (a delta's middle is not cut out as a view: the copy takes the range).
    let from = 0;
    let to = body?.length ?? 0;
    if (body && body.length > 0 && meta.content_encoding === undefined && meta.body_omitted === undefined) {
      const key = conversationKey(meta.identity);
      const delta = this.window.encode(key, body);
      this.window.remember(key, callId, body, delta);
      if (delta) {
        meta.delta = delta; // the caller's meta is the frame's: no copy of it on the request path
        from = delta.prefix;
        to = body.length - delta.suffix;
      }
    }
    this.beginFrame(callId, 'q', to - from, true);
    writeRequestMeta(this.out, meta);
    return this.endFrame(body, from, to);
  }

  /** Appends a response-head frame (ResponseHeadMeta; `head` from splitResponseHead). */
  appendResponseHead(callId: string, status: number, head: RecordedResponseHead): Promise<void> | undefined {
    if (this.failure || this.closing) return undefined;
    this.beginFrame(callId, 'r', 0, true);
    writeResponseHeadMeta(this.out, status, head);
    return this.endFrame(undefined);
  }

  /** Appends an end frame. */
  appendEnd(callId: string, end: EndMeta): Promise<void> | undefined {
    if (this.failure || this.closing) return undefined;
    this.beginFrame(callId, 'x', 0, true);
    writeEndMeta(this.out, end);
    return this.endFrame(undefined);
  }

  /**
   * Appends one frame, its meta as JSON.stringify spells it (the request path uses the methods above). `body` is
   * not copied when it is big and the log is not direct: the caller must not reuse it (socket and undici chunks
   * are never reused).
   */
  append(callId: string, kind: FrameKind, meta: object | undefined, body?: Buffer): Promise<void> | undefined {
    if (this.failure || this.closing) return undefined;
    const json = meta === undefined ? undefined : (JSON.stringify(meta) as string | undefined);
    this.beginFrame(callId, kind, body?.length ?? 0, json !== undefined);
    if (json !== undefined) this.out.json(json);
    return this.endFrame(body);
  }

  /** The frame header up to its meta: `{"c":…,"k":…,"n":…` and `,"m":` when a meta follows. */
  private beginFrame(callId: string, kind: FrameKind, n: number, withMeta: boolean): void {
    // Call ids are roller's own ([A-Za-z0-9-]) and kinds one letter: nothing to escape. Constant texts and the id as
    // they are, the length digit by digit: no string is built (a template here was flattened on every frame), and
    // the room for all but the digits is reserved once.
    const kindText = KIND_TEXT[kind];
    const out = this.out;
    this.frameStart = out.appended;
    out.reserve(6 + callId.length + kindText.length);
    const slab = out.slab;
    let p = out.end;
    slab[p++] = 123; // {"c":"
    slab[p++] = 34;
    slab[p++] = 99;
    slab[p++] = 34;
    slab[p++] = 58;
    slab[p++] = 34;
    for (let i = 0; i < callId.length; i++) slab[p++] = callId.charCodeAt(i);
    for (let i = 0; i < kindText.length; i++) slab[p++] = kindText.charCodeAt(i);
    out.appended += p - out.end;
    out.end = p;
    out.number(n);
    if (withMeta) out.ascii(',"m":');
  }

  /**
   * Closes the header line, appends body[from, to) (the whole body by default) and the frame's '\n'; the high-water
   * promise as append's.
   */
  private endFrame(body: Buffer | undefined, from = 0, to = body?.length ?? 0): Promise<void> | undefined {
    const out = this.out;
    out.ascii('}\n');
    if (body) out.bytes(body, from, to);
    out.byte(10); // the frame's closing '\n'
    const bytes = out.appended - this.frameStart;
    this.bytes += bytes;
    this.unflushed += bytes;
    this.schedule();
    if (this.unflushed <= this.highWaterBytes) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves when every frame appended so far is written, then marks the log closed for readers. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.scheduled && this.timer) {
        clearTimeout(this.timer);
        this.scheduled = false;
      }
      if (!this.writing) this.flush();
      while (this.writing || this.unflushed > 0) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        if (!this.writing) this.flush();
      }
      try {
        // Direct: the last block was written padded; the file ends where the log does (also after a failed write).
        if (this.direct) await ftruncateAsync(this.fd, this.committed[0]!);
        await fsyncAsync(this.fd);
      } catch (err) {
        this.failure ??= err as Error;
      }
      await closeAsync(this.fd);
      Atomics.store(this.progress, PROGRESS_CLOSED, 1);
      Atomics.add(this.progress, PROGRESS_GENERATION, 1);
      Atomics.notify(this.progress, PROGRESS_GENERATION);
      if (this.failure) throw this.failure;
    })();
    return this.closing;
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    const run = (): void => {
      this.scheduled = false;
      this.flush();
    };
    if (this.unflushed >= FLUSH_BYTES) setImmediate(run);
    else this.timer = setTimeout(run, FLUSH_DELAY_MS);
  }

  private flush(): void {
    if (this.writing) return;
    if (this.unflushed === 0) return this.wake();
    const position = this.fileAt;
    const batch = this.out.take();
    this.fileAt = position + batch.advance;
    this.unflushed = 0;
    this.writing = true;
    // The slab part just queued is being written; later frames go after it in the same slab.
    writev(this.fd, batch.parts, position, (writeErr, written) => {
      this.writing = false;
      this.out.recycle(batch.done);
      // A short write (a full disk) is a failure too: what follows must not land after a gap.
      const err = writeErr ?? (written === batch.submitted ? null : new Error(`${this.path}: wrote ${written} of ${batch.submitted} bytes (is the disk full?)`));
      if (err) {
        this.failure ??= err;
        this.out.dropQueued();
        this.unflushed = 0;
      } else this.committed[0] = position + batch.logBytes;
      this.lastWrite[0] = Date.now();
      Atomics.add(this.progress, PROGRESS_GENERATION, 1);
      Atomics.notify(this.progress, PROGRESS_GENERATION);
      // What arrived meanwhile waits for the next timer (or the size limit): flushing it right away
      // would make a write — a thread-pool round trip — per request under load.
      if (this.unflushed > 0) this.schedule();
      this.wake();
    });
  }

  private wake(): void {
    if (this.unflushed > this.highWaterBytes && !this.failure) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
