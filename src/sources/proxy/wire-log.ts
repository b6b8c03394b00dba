import { close as closeFd, fsync, open as openFd, writev } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { RecordedError } from '../../schemas/common.js';
import type { Protocol } from '../../schemas/call.js';
import { conversationKey, DeltaWindow, type BodyDelta } from './body-delta.js';
import { requestMetaJson } from './frame-json.js';
import type { NativeIdentityHeaders } from './headers.js';

/**
 * The wire log: everything the proxy saw, in one append-only file per capture, written on the request
 * path and nothing else. Calls (decoded responses, records, wire traces) are projected from it behind
 * the proxy — by the same code that reprocesses an archive — so recording costs a copy and a share of one
 * write per event-loop turn, never a parse, a file open or a wait for a consumer.
 *
 * A frame is a JSON header line `{"c":call_id,"k":kind,"n":bytes[,"m":meta]}` followed by exactly `n`
 * raw bytes and a '\n'. Kinds, in the order they occur for one call (calls interleave):
 *   q  the request: meta RequestMeta, bytes = the body as received (still content-encoded), or with
 *      meta.delta the bytes that differ from a recent body (body-delta.ts)
 *   r  the response head: meta ResponseHeadMeta, no bytes
 *   d  response bytes as received (HTTP: a body chunk, still content-encoded; WebSocket: one text message)
 *   x  the end of the exchange: meta EndMeta, no bytes
 */
export const WIRE_LOG_FILE = 'raw/wire.frames';

export type FrameKind = 'q' | 'r' | 'd' | 'x';

export interface RequestMeta {
  seq: number;
  transport: 'http' | 'websocket';
  protocol: Protocol;
  method: string;
  path: string;
  upstream_path: string;
  /** Epoch milliseconds (formatted by the projection, not on the request path). */
  started_at: number;
  identity: NativeIdentityHeaders;
  dropped: string[];
  content_encoding?: string;
  /** Set when the body is not in the frame (and why). */
  body_omitted?: string;
  /** The frame holds only what differs from a recent body (readers give back the whole body). */
  delta?: BodyDelta;
  /**
   * In a published capture: the frame holds no bytes, the body is the call's context in calls.jsonl
   * (seeds/000: a request body is not stored a second time). Readers resolve it with `bodies`.
   */
  body_ref?: BodyRef;
}

export interface BodyRef {
  file: 'calls.jsonl';
  call_id: string;
  /** JSON pointer into the call record. */
  pointer: '/context';
  /** The content-encoding the body had on the wire (the reference is to the decoded JSON). */
  wire_content_encoding?: string;
}

export interface ResponseHeadMeta {
  status: number;
  /** Response headers, credentials (set-cookie) removed. */
  headers: Record<string, string | string[] | undefined>;
}

export interface EndMeta {
  /** Epoch milliseconds. */
  first_byte_at: number | null;
  ended_at: number;
  upstream_ended: boolean;
  client_aborted: boolean;
  upstream_error: string | null;
  errors: RecordedError[];
}

/** Index of the fields of WireLogWriter.progress (an Int32Array over a SharedArrayBuffer). */
export const PROGRESS_GENERATION = 0;
export const PROGRESS_CLOSED = 1;
/** Exchanges the proxy has open right now (a reader that yields waits while there are any). */
export const PROGRESS_OPEN_EXCHANGES = 2;
/** Byte offset, in progress.buffer, of a Float64: epoch ms of the last completed write. */
export const PROGRESS_LAST_WRITE_BYTE = 16;

/** When the writer behind `progress` last completed a write (epoch ms). */
export function lastWriteAt(progress: Int32Array): number {
  return new Float64Array(progress.buffer, PROGRESS_LAST_WRITE_BYTE, 1)[0]!;
}

const SLAB_BYTES = 256 << 10;
/** Written slabs kept for reuse (a flush rarely spans more than two). */
const MAX_SPARE_SLABS = 8;
/** Written at once from this many buffered bytes; below it, within FLUSH_DELAY_MS. */
const FLUSH_BYTES = 512 << 10;
const FLUSH_DELAY_MS = 5;
/** Bodies at least this big are handed to writev as they are instead of being copied into a slab. */
const COPY_LIMIT = 4096;

const fsyncAsync = promisify(fsync);
const closeAsync = promisify(closeFd);

/**
 * The writer. Frames are packed into slabs and written with one writev per 5 ms or 512 KB (however many
 * exchanges are in flight): each write is a thread-pool round trip, and per-turn writes cost the request
 * path more than everything else roller does on it. `progress` tells readers — in this thread or a worker — that bytes landed:
 * its generation counter moves after every completed write, and its closed flag is set once the last one
 * is on disk. append() returns a promise only when more than `highWaterBytes` wait for the disk; the
 * proxy awaits it, so a slow disk slows the upstream read instead of growing memory.
 */
export class WireLogWriter {
  readonly progress = new Int32Array(new SharedArrayBuffer(24), 0, 3);
  private readonly lastWrite = new Float64Array(this.progress.buffer, PROGRESS_LAST_WRITE_BYTE, 1);
  bytes = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private slab: Buffer = Buffer.allocUnsafe(SLAB_BYTES);
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

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly highWaterBytes: number,
  ) {}

  static async open(path: string, options: { highWaterBytes?: number } = {}): Promise<WireLogWriter> {
    await mkdir(dirname(path), { recursive: true });
    const fd = await new Promise<number>((resolve, reject) => openFd(path, 'a', (err, fd) => (err ? reject(err) : resolve(fd))));
    return new WireLogWriter(path, fd, options.highWaterBytes ?? 16 << 20);
  }

  get error(): Error | undefined {
    return this.failure;
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
    if (body && body.length > 0 && meta.content_encoding === undefined && meta.body_omitted === undefined && !this.failure && !this.closing) {
      const key = conversationKey(meta.identity);
      const delta = this.window.encode(key, body);
      this.window.remember(key, callId, body);
      if (delta) {
        meta.delta = delta; // the caller's meta is the frame's: no copy of it on the request path
        return this.appendJson(callId, 'q', requestMetaJson(meta), body.subarray(delta.prefix, body.length - delta.suffix));
      }
    }
    return this.appendJson(callId, 'q', requestMetaJson(meta), body);
  }

  /**
   * Appends one frame (requests go through appendRequest). `body` is not copied when it is big: the caller must not reuse it (socket and
   * undici chunks are never reused).
   */
  append(callId: string, kind: FrameKind, meta: object | undefined, body?: Buffer): Promise<void> | undefined {
    return this.appendJson(callId, kind, meta === undefined ? undefined : JSON.stringify(meta), body);
  }

  /** append() with the meta already JSON text (frame-json.ts builds the request path's metas). */
  appendJson(callId: string, kind: FrameKind, metaJson: string | undefined, body?: Buffer): Promise<void> | undefined {
    if (this.failure || this.closing) return undefined;
    const n = body?.length ?? 0;
    // Call ids are roller's own ([A-Za-z0-9-]): the header needs no JSON escaping but the meta's.
    const header = `{"c":"${callId}","k":"${kind}","n":${n}${metaJson === undefined ? '' : `,"m":${metaJson}`}}\n`;
    // Without a meta the header is ASCII: latin1 is a plain copy, utf8 an encoder pass (a body chunk's frame
    // is the most frequent one).
    const headerBytes = this.put(header, metaJson === undefined ? 'latin1' : 'utf8');
    if (body && n > 0) {
      if (n >= COPY_LIMIT) {
        this.cut();
        this.queued.push(body);
        this.queuedBytes += n;
      } else {
        this.reserve(n);
        body.copy(this.slab, this.slabEnd);
        this.slabEnd += n;
      }
    }
    this.reserve(1);
    this.slab[this.slabEnd++] = 10; // the frame's closing '\n'
    this.bytes += headerBytes + n + 1;
    this.schedule();
    if (this.queuedBytes + (this.slabEnd - this.slabStart) <= this.highWaterBytes) return undefined;
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
      while (this.writing || this.queued.length > 0 || this.slabEnd > this.slabStart) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        if (!this.writing) this.flush();
      }
      try {
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

  /** Copies `text` into the slab; returns its length in bytes. */
  private put(text: string, encoding: 'latin1' | 'utf8'): number {
    // Reserve the worst case (3 bytes per UTF-16 unit) rather than measure the string first.
    this.reserve(encoding === 'latin1' ? text.length : text.length * 3);
    const written = this.slab.write(text, this.slabEnd, encoding);
    this.slabEnd += written;
    return written;
  }

  private reserve(bytes: number): void {
    if (this.slab.length - this.slabEnd >= bytes) return;
    this.cut();
    if (this.slab.length === SLAB_BYTES) this.retired.push(this.slab);
    this.slab = (bytes <= SLAB_BYTES ? this.spare.pop() : undefined) ?? Buffer.allocUnsafe(Math.max(SLAB_BYTES, bytes));
    this.slabStart = 0;
    this.slabEnd = 0;
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
    if (this.queuedBytes + (this.slabEnd - this.slabStart) >= FLUSH_BYTES) setImmediate(run);
    else this.timer = setTimeout(run, FLUSH_DELAY_MS);
  }

  private flush(): void {
    if (this.writing) return;
    this.cut();
    if (this.queued.length === 0) return this.wake();
    const batch = this.queued;
    // Every part of these slabs is in this batch or an earlier one (writes run one at a time, in order).
    const done = this.retired;
    this.retired = [];
    this.queued = [];
    this.queuedBytes = 0;
    this.writing = true;
    // The slab part just queued is being written; later frames go after it in the same slab.
    writev(this.fd, batch, (err) => {
      this.writing = false;
      for (const slab of done) if (this.spare.length < MAX_SPARE_SLABS) this.spare.push(slab);
      if (err) {
        this.failure ??= err;
        this.queued = [];
        this.queuedBytes = 0;
      }
      this.lastWrite[0] = Date.now();
      Atomics.add(this.progress, PROGRESS_GENERATION, 1);
      Atomics.notify(this.progress, PROGRESS_GENERATION);
      // What arrived meanwhile waits for the next timer (or the size limit): flushing it right away
      // would make a write — a thread-pool round trip — per request under load.
      if (this.queued.length > 0 || this.slabEnd > this.slabStart) this.schedule();
      this.wake();
    });
  }

  private wake(): void {
    if (this.queuedBytes + (this.slabEnd - this.slabStart) > this.highWaterBytes && !this.failure) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
