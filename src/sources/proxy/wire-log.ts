import { close as closeFd, constants as fsConstants, fstat, fsync, ftruncate, open as openFd, writev } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { conversationKey, DeltaWindow } from './body-delta.js';
import { alignedBuffer, DIRECT_BLOCK, withDirect } from './direct-io.js';
import { numberText, writeEndMeta, writeRequestMeta, writeResponseHeadMeta, type JsonOut, type RecordedResponseHead } from './frame-json.js';
import type { EndMeta, FrameKind, RequestMeta } from './wire-format.js';
import { PROGRESS_COMMITTED_BYTE, PROGRESS_DIRECT, PROGRESS_GENERATION, PROGRESS_CLOSED, PROGRESS_LAST_WRITE_BYTE, PROGRESS_OPEN_EXCHANGES } from './wire-progress.js';

export * from './wire-format.js';
export * from './wire-progress.js';

/** A frame header's text from the call id's closing quote to its length. */
const KIND_TEXT: Readonly<Record<FrameKind, string>> = { q: '","k":"q","n":', r: '","k":"r","n":', d: '","k":"d","n":', x: '","k":"x","n":' };

const SLAB_BYTES = 256 << 10;
/** Written slabs kept for reuse (page cache mode; a flush rarely spans more than two). */
const MAX_SPARE_SLABS = 8;
/**
 * Direct I/O: slabs come from WebAssembly memories of this many slabs each (2 MB), one mapping per arena rather than
 * per slab — V8 reserves ~10 GB of address space for every WebAssembly memory and caps the total near 1 TB, which a few
 * writers' slabs each in its own memory would reach. Arena slabs are all kept for reuse: their number follows the most
 * the writer ever had waiting for the disk (at most highWaterBytes).
 */
const ARENA_SLABS = 8;
/** Written at once from this many buffered bytes; below it, within FLUSH_DELAY_MS. */
const FLUSH_BYTES = 512 << 10;
const FLUSH_DELAY_MS = 5;
/** Bodies at least this big are handed to writev as they are instead of being copied into a slab. */
const COPY_LIMIT = 4096;

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
 * With direct I/O (see open) every byte is copied into a slab, each write covers whole 4 KB blocks from aligned
 * memory, and the last block goes out padded with zeros and is written again, completed, by the next write; the
 * file is cut to the log's length at close. Readers that follow the log read no further than `committedBytes`.
 */
export class WireLogWriter {
  readonly progress = new Int32Array(new SharedArrayBuffer(32), 0, 4);
  private readonly lastWrite = new Float64Array(this.progress.buffer, PROGRESS_LAST_WRITE_BYTE, 1);
  private readonly committed = new Float64Array(this.progress.buffer, PROGRESS_COMMITTED_BYTE, 1);
  bytes = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  /** Bytes appended and not yet handed to a write. */
  private unflushed = 0;
  private slab: Buffer;
  private slabStart = 0;
  private slabEnd = 0;
  /** Slabs left behind since the last write started: all their parts are queued (or written). */
  private retired: Buffer[] = [];
  /** Written slabs, reused: a fresh 256 KB slab is 64 pages the kernel maps in, one fault each. */
  private spare: Buffer[] = [];
  private writing = false;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private failure: Error | undefined;
  private readonly window = new DeltaWindow();
  /** Bytes of the frame being appended (its pieces can span slabs). */
  private frameBytes = 0;
  /** The slab as a JsonOut: the request path's metas are spelled straight into it (frame-json.ts). */
  private readonly out: JsonOut = {
    ascii: (text) => this.putAscii(text),
    string: (s) => this.putString(s),
    json: (text) => this.putUtf8(text),
    number: (n) => this.putNumber(n),
  };

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly highWaterBytes: number,
    /** Direct I/O: writes bypass the page cache (see open). */
    readonly direct: boolean,
    /** Where the next write starts: the file's length at open, then (direct) the start of the last partial block. */
    private fileAt: number,
  ) {
    this.slab = this.newSlab(SLAB_BYTES);
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
    if (json !== undefined) this.putUtf8(json);
    return this.endFrame(body);
  }

  /** The frame header up to its meta: `{"c":…,"k":…,"n":…` and `,"m":` when a meta follows. */
  private beginFrame(callId: string, kind: FrameKind, n: number, withMeta: boolean): void {
    // Call ids are roller's own ([A-Za-z0-9-]) and kinds one letter: nothing to escape. Constant texts and the id as
    // they are, the length digit by digit: no string is built (a template here was flattened on every frame), and
    // the room for all but the digits is reserved once.
    const kindText = KIND_TEXT[kind];
    this.reserve(6 + callId.length + kindText.length);
    const slab = this.slab;
    let p = this.slabEnd;
    slab[p++] = 123; // {"c":"
    slab[p++] = 34;
    slab[p++] = 99;
    slab[p++] = 34;
    slab[p++] = 58;
    slab[p++] = 34;
    for (let i = 0; i < callId.length; i++) slab[p++] = callId.charCodeAt(i);
    for (let i = 0; i < kindText.length; i++) slab[p++] = kindText.charCodeAt(i);
    this.frameBytes = p - this.slabEnd;
    this.slabEnd = p;
    this.putNumber(n);
    if (withMeta) this.putAscii(',"m":');
  }

  /**
   * Closes the header line, appends body[from, to) (the whole body by default) and the frame's '\n'; the high-water
   * promise as append's.
   */
  private endFrame(body: Buffer | undefined, from = 0, to = body?.length ?? 0): Promise<void> | undefined {
    this.putAscii('}\n');
    const n = to - from;
    if (body && n > 0) {
      if (n >= COPY_LIMIT && !this.direct) {
        this.cut();
        this.queued.push(n === body.length ? body : body.subarray(from, to));
        this.queuedBytes += n;
      } else if (n <= SLAB_BYTES) {
        this.reserve(n);
        body.copy(this.slab, this.slabEnd, from, to);
        this.slabEnd += n;
      } else {
        // Direct I/O, a body bigger than a slab: in slab-sized pieces (a frame may span slabs).
        for (let at = from; at < to; ) {
          if (this.slabEnd === this.slab.length) this.reserve(1);
          const k = Math.min(to - at, this.slab.length - this.slabEnd);
          body.copy(this.slab, this.slabEnd, at, at + k);
          this.slabEnd += k;
          at += k;
        }
      }
    }
    this.reserve(1);
    this.slab[this.slabEnd++] = 10; // the frame's closing '\n'
    const bytes = this.frameBytes + n + 1;
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

  /** Printable ASCII the caller vouches for, copied byte by byte (short texts: cheaper than a native write). */
  private putAscii(text: string): void {
    const n = text.length;
    this.reserve(n);
    const slab = this.slab;
    let p = this.slabEnd;
    for (let i = 0; i < n; i++) slab[p++] = text.charCodeAt(i);
    this.slabEnd = p;
    this.frameBytes += n;
  }

  /** A number as JSON.stringify spells it: a safe non-negative integer digit by digit, anything else through String. */
  private putNumber(n: number): void {
    if (n >= 0 && n < 1e9 && (n | 0) === n) return this.putDigits(n, 0);
    if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Math.floor(n) === n)) return this.putAscii(numberText(n));
    // Epoch milliseconds and other big integers: two int32 halves (double division and modulo are slow).
    const high = Math.floor(n / 1e9);
    this.putDigits(high, 0);
    this.putDigits(n - high * 1e9, 9);
  }

  /** The decimal digits of an int32 `n` ≥ 0, zero-padded to `width`. */
  private putDigits(n: number, width: number): void {
    let digits = 1;
    for (let x = n; x >= 10; x = (x / 10) | 0) digits++;
    if (digits < width) digits = width;
    this.reserve(digits);
    const slab = this.slab;
    let p = this.slabEnd + digits;
    let x = n;
    for (let i = 0; i < digits; i++) {
      const q = (x / 10) | 0;
      slab[--p] = 48 + x - q * 10;
      x = q;
    }
    this.slabEnd += digits;
    this.frameBytes += digits;
  }

  /** A JSON string: as it is when it needs no escape (printable ASCII but '"' and '\\'), else JSON.stringify(s). */
  private putString(s: string): void {
    const n = s.length;
    this.reserve(n + 2);
    const slab = this.slab;
    let p = this.slabEnd;
    slab[p++] = 34;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Bytes copied so far are past slabEnd: the escaped text overwrites them.
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return this.putUtf8(JSON.stringify(s));
      slab[p++] = c;
    }
    slab[p++] = 34;
    this.slabEnd = p;
    this.frameBytes += n + 2;
  }

  /** JSON text, UTF-8 encoded (reserving the worst case, 3 bytes per UTF-16 unit, rather than measuring first). */
  private putUtf8(text: string): void {
    this.reserve(text.length * 3);
    const n = this.slab.write(text, this.slabEnd, 'utf8');
    this.slabEnd += n;
    this.frameBytes += n;
  }

  private newSlab(bytes: number): Buffer {
    if (!this.direct) return Buffer.allocUnsafe(bytes);
    // Only a meta bigger than a slab wants more (bodies are copied in slab-sized pieces): its own aligned memory.
    if (bytes > SLAB_BYTES) return alignedBuffer(bytes);
    const arena = alignedBuffer(ARENA_SLABS * SLAB_BYTES);
    for (let i = 1; i < ARENA_SLABS; i++) this.spare.push(arena.subarray(i * SLAB_BYTES, (i + 1) * SLAB_BYTES));
    return arena.subarray(0, SLAB_BYTES);
  }

  private reserve(bytes: number): void {
    if (this.slab.length - this.slabEnd >= bytes) return;
    // Direct: queued parts must be whole blocks, so the last partial block moves to the next slab (and is written
    // from there, whether or not a write already took it padded).
    const keep = this.direct ? this.slabEnd % DIRECT_BLOCK : 0;
    this.slabEnd -= keep;
    this.cut();
    const old = this.slab;
    if (old.length === SLAB_BYTES) this.retired.push(old);
    this.slab = (keep + bytes <= SLAB_BYTES ? this.spare.pop() : undefined) ?? this.newSlab(Math.max(SLAB_BYTES, keep + bytes));
    old.copy(this.slab, 0, this.slabEnd, this.slabEnd + keep);
    this.slabStart = 0;
    this.slabEnd = keep;
  }

  /** Moves the filled part of the slab to the write queue. */
  private cut(): void {
    if (this.slabEnd === this.slabStart) return;
    this.queued.push(this.slab.subarray(this.slabStart, this.slabEnd));
    this.queuedBytes += this.slabEnd - this.slabStart;
    this.slabStart = this.slabEnd;
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
    let bytes: number;
    if (this.direct) {
      // Whole blocks from aligned memory: the last one padded with zeros (a reader after a crash sees NULs where
      // the log ends, never stale bytes), its start the next write's start, so the next write completes it.
      const end = this.slabEnd;
      const padded = Math.ceil(end / DIRECT_BLOCK) * DIRECT_BLOCK;
      this.slab.fill(0, end, padded);
      if (padded > this.slabStart) {
        this.queued.push(this.slab.subarray(this.slabStart, padded));
        this.queuedBytes += padded - this.slabStart;
      }
      bytes = this.queuedBytes - (padded - end);
      const partialStart = end - (end % DIRECT_BLOCK);
      this.fileAt = position + this.queuedBytes - (padded - partialStart);
      this.slabStart = partialStart;
    } else {
      this.cut();
      bytes = this.queuedBytes;
      this.fileAt = position + bytes;
    }
    const batch = this.queued;
    const submitted = this.queuedBytes;
    // Every part of these slabs is in this batch or an earlier one (writes run one at a time, in order).
    const done = this.retired;
    this.retired = [];
    this.queued = [];
    this.queuedBytes = 0;
    this.unflushed = 0;
    this.writing = true;
    // The slab part just queued is being written; later frames go after it in the same slab.
    writev(this.fd, batch, position, (writeErr, written) => {
      this.writing = false;
      for (const slab of done) if (this.direct || this.spare.length < MAX_SPARE_SLABS) this.spare.push(slab);
      // A short write (a full disk) is a failure too: what follows must not land after a gap.
      const err = writeErr ?? (written === submitted ? null : new Error(`${this.path}: wrote ${written} of ${submitted} bytes (is the disk full?)`));
      if (err) {
        this.failure ??= err;
        this.queued = [];
        this.queuedBytes = 0;
        this.unflushed = 0;
      } else this.committed[0] = position + bytes;
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
