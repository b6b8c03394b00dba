import { alignedBuffer, DIRECT_BLOCK } from './direct-io.js';
import { numberText, type JsonOut } from './frame-json.js';

const SLAB_BYTES = 256 << 10;
/** Written slabs kept for reuse (page cache mode; a flush rarely spans more than two). */
const MAX_SPARE_SLABS = 8;
/**
 * Direct I/O: slabs come from WebAssembly memories of this many slabs each (2 MB), one mapping per arena rather than
 * per slab — V8 reserves ~10 GB of address space for every WebAssembly memory and caps the total near 1 TB, which a few
 * writers' slabs each in its own memory would reach. Arena slabs are all kept for reuse: their number follows the most
 * the writer ever had waiting for the disk (at most its high-water mark).
 */
const ARENA_SLABS = 8;
/** Page cache mode: bodies at least this big are handed to writev as they are instead of being copied into a slab. */
const COPY_LIMIT = 4096;

/** What one write takes from the queue (take()). */
export interface SlabBatch {
  /** The writev parts, in order. */
  parts: Buffer[];
  /** Bytes the parts hold (direct: the last block's padding included). */
  submitted: number;
  /** Bytes of log they carry (without that padding): where the log is complete up to, after the write. */
  logBytes: number;
  /** How far the next write starts after this one (direct: at the last partial block, which it writes again). */
  advance: number;
  /** Slabs every part of which is in this batch or an earlier one: give them back (recycle) once it is written. */
  done: Buffer[];
}

/**
 * The memory side of the wire log: bytes appended into reused slabs and handed out as write batches. Text is spelled
 * straight into the slab (it is the JsonOut the frame metas are written to), bodies copied in — or, through the page
 * cache, big ones queued as they are. With direct I/O every part is whole 4 KB blocks of aligned memory: a slab that
 * fills up moves its last partial block to the next slab, and a batch ends with the current block padded with zeros,
 * which stays in the slab and goes out again, completed, in the next batch.
 */
export class SlabQueue implements JsonOut {
  /** The slab being filled, and its bytes not yet in a batch: [start, end). Public for the frame header's byte loop. */
  slab: Buffer;
  start = 0;
  end = 0;
  /** Bytes appended so far (a frame's size is the difference across it). */
  appended = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  /** Slabs left behind since the last batch: all their parts are queued (or written). */
  private retired: Buffer[] = [];
  /** Written slabs, reused: a fresh 256 KB slab is 64 pages the kernel maps in, one fault each. */
  private spare: Buffer[] = [];

  constructor(readonly direct: boolean) {
    this.slab = this.newSlab(SLAB_BYTES);
  }

  /** Room for `bytes` contiguous bytes at `end` (a new slab when the current one has less). */
  reserve(bytes: number): void {
    if (this.slab.length - this.end >= bytes) return;
    // Direct: queued parts must be whole blocks, so the last partial block moves to the next slab (and is written
    // from there, whether or not a batch already took it padded).
    const keep = this.direct ? this.end % DIRECT_BLOCK : 0;
    this.end -= keep;
    this.cut();
    const old = this.slab;
    if (old.length === SLAB_BYTES) this.retired.push(old);
    this.slab = (keep + bytes <= SLAB_BYTES ? this.spare.pop() : undefined) ?? this.newSlab(Math.max(SLAB_BYTES, keep + bytes));
    old.copy(this.slab, 0, this.end, this.end + keep);
    this.start = 0;
    this.end = keep;
  }

  /** Printable ASCII the caller vouches for, copied byte by byte (short texts: cheaper than a native write). */
  ascii(text: string): void {
    const n = text.length;
    this.reserve(n);
    const slab = this.slab;
    let p = this.end;
    for (let i = 0; i < n; i++) slab[p++] = text.charCodeAt(i);
    this.end = p;
    this.appended += n;
  }

  /** A number as JSON.stringify spells it: a safe non-negative integer digit by digit, anything else through String. */
  number(n: number): void {
    if (n >= 0 && n < 1e9 && (n | 0) === n) return this.digits(n, 0);
    if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Math.floor(n) === n)) return this.ascii(numberText(n));
    // Epoch milliseconds and other big integers: two int32 halves (double division and modulo are slow).
    const high = Math.floor(n / 1e9);
    this.digits(high, 0);
    this.digits(n - high * 1e9, 9);
  }

  /** A JSON string: as it is when it needs no escape (printable ASCII but '"' and '\\'), else JSON.stringify(s). */
  string(s: string): void {
    const n = s.length;
    this.reserve(n + 2);
    const slab = this.slab;
    let p = this.end;
    slab[p++] = 34;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Bytes copied so far are past `end`: the escaped text overwrites them.
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return this.json(JSON.stringify(s));
      slab[p++] = c;
    }
    slab[p++] = 34;
    this.end = p;
    this.appended += n + 2;
  }

  /** JSON text, UTF-8 encoded (reserving the worst case, 3 bytes per UTF-16 unit, rather than measuring first). */
  json(text: string): void {
    this.reserve(text.length * 3);
    const n = this.slab.write(text, this.end, 'utf8');
    this.end += n;
    this.appended += n;
  }

  /** One byte. */
  byte(b: number): void {
    this.reserve(1);
    this.slab[this.end++] = b;
    this.appended++;
  }

  /**
   * body[from, to). Through the page cache a big one is queued as it is (the caller must not reuse it: socket and
   * undici chunks never are); otherwise it is copied, in slab-sized pieces when it is bigger than a slab.
   */
  bytes(body: Buffer, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    this.appended += n;
    if (n >= COPY_LIMIT && !this.direct) {
      this.cut();
      this.queued.push(n === body.length ? body : body.subarray(from, to));
      this.queuedBytes += n;
    } else if (n <= SLAB_BYTES) {
      this.reserve(n);
      body.copy(this.slab, this.end, from, to);
      this.end += n;
    } else {
      for (let at = from; at < to; ) {
        if (this.end === this.slab.length) this.reserve(1);
        const k = Math.min(to - at, this.slab.length - this.end);
        body.copy(this.slab, this.end, at, at + k);
        this.end += k;
        at += k;
      }
    }
  }

  /** Everything appended and not yet taken, as one write's parts. */
  take(): SlabBatch {
    let logBytes: number;
    let advance: number;
    if (this.direct) {
      // Whole blocks from aligned memory: the last one padded with zeros (a reader after a crash sees NULs where the
      // log ends, never stale bytes), its start the next batch's start, so the next write completes it.
      const end = this.end;
      const padded = Math.ceil(end / DIRECT_BLOCK) * DIRECT_BLOCK;
      this.slab.fill(0, end, padded);
      if (padded > this.start) {
        this.queued.push(this.slab.subarray(this.start, padded));
        this.queuedBytes += padded - this.start;
      }
      logBytes = this.queuedBytes - (padded - end);
      const partialStart = end - (end % DIRECT_BLOCK);
      advance = this.queuedBytes - (padded - partialStart);
      this.start = partialStart;
    } else {
      this.cut();
      logBytes = advance = this.queuedBytes;
    }
    const batch: SlabBatch = { parts: this.queued, submitted: this.queuedBytes, logBytes, advance, done: this.retired };
    this.queued = [];
    this.queuedBytes = 0;
    this.retired = [];
    return batch;
  }

  /** The slabs of a written batch, for reuse. */
  recycle(done: Buffer[]): void {
    for (const slab of done) if (this.direct || this.spare.length < MAX_SPARE_SLABS) this.spare.push(slab);
  }

  /** After a failed write: what was queued is dropped (nothing may land after a gap). */
  dropQueued(): void {
    this.queued = [];
    this.queuedBytes = 0;
  }

  /** The decimal digits of an int32 `n` ≥ 0, zero-padded to `width`. */
  private digits(n: number, width: number): void {
    let count = 1;
    for (let x = n; x >= 10; x = (x / 10) | 0) count++;
    if (count < width) count = width;
    this.reserve(count);
    const slab = this.slab;
    let p = this.end + count;
    let x = n;
    for (let i = 0; i < count; i++) {
      const q = (x / 10) | 0;
      slab[--p] = 48 + x - q * 10;
      x = q;
    }
    this.end += count;
    this.appended += count;
  }

  /** Moves the filled part of the slab to the queue. */
  private cut(): void {
    if (this.end === this.start) return;
    this.queued.push(this.slab.subarray(this.start, this.end));
    this.queuedBytes += this.end - this.start;
    this.start = this.end;
  }

  private newSlab(bytes: number): Buffer {
    if (!this.direct) return Buffer.allocUnsafe(bytes);
    // Only a meta bigger than a slab wants more (bodies are copied in slab-sized pieces): its own aligned memory.
    if (bytes > SLAB_BYTES) return alignedBuffer(bytes);
    const arena = alignedBuffer(ARENA_SLABS * SLAB_BYTES);
    for (let i = 1; i < ARENA_SLABS; i++) this.spare.push(arena.subarray(i * SLAB_BYTES, (i + 1) * SLAB_BYTES));
    return arena.subarray(0, SLAB_BYTES);
  }
}
