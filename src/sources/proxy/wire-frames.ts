import { open } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { conversationKey, DeltaWindow } from './body-delta.js';
import { DirectReads } from './direct-io.js';
import type { BodyRef, FrameKind, RequestMeta } from './wire-format.js';
import { committedBytes, lastWriteAt, PROGRESS_CLOSED, PROGRESS_DIRECT, PROGRESS_GENERATION, PROGRESS_OPEN_EXCHANGES } from './wire-progress.js';

export interface WireFrame {
  /** Call id. */
  c: string;
  k: FrameKind;
  m?: unknown;
  body: Buffer;
  /** Byte offset of the frame's header line in the log. */
  offset: number;
}

export interface ReadWireOptions {
  /**
   * Follow a log that is still being written (WireLogWriter.progress, possibly shared from another
   * thread): at the end of the bytes so far, wait for more until the writer marks the log closed.
   */
  follow?: Int32Array;
  signal?: AbortSignal;
  readBytes?: number;
  /**
   * Following only: let the writer go first. While the proxy has exchanges open or wrote within
   * `quietMs`, wait — but never fall more than `maxLagMs` behind the last time the reader was caught up. On a machine
   * whose cores the proxy, the harness and the model client share, this keeps projection work out of
   * the way of forwarding, and does it when the agent is waiting for the model or running a tool.
   */
  yieldTo?: { quietMs: number; maxLagMs: number };
  /** Resolves the body of a request frame that holds a body_ref (a published capture's raw/). */
  bodies?: (ref: BodyRef) => Buffer | undefined;
  /** Called when the log ends inside a frame (a crash mid-write): how many bytes were left over. */
  onTruncated?(bytes: number, offset: number): void;
}

/** How long a follower sleeps between looks when no write notifies it (a backstop, not the pace). */
const FOLLOW_POLL_MS = 50;

/**
 * The frames of a wire log, in order. A header line that is not a frame header is a corrupt log: a
 * typed error with the file and byte offset (nothing after it can be framed).
 */
export async function* readWireFrames(path: string, options: ReadWireOptions = {}): AsyncGenerator<WireFrame> {
  // Following a direct-I/O writer: read the same way, so the log never enters the page cache (where each fresh
  // page would cost what the writer avoided).
  const direct = options.follow && options.follow.length > PROGRESS_DIRECT && Atomics.load(options.follow, PROGRESS_DIRECT) === 1 ? await DirectReads.open(path) : undefined;
  const handle = direct ? undefined : await open(path, 'r');
  const readBytes = options.readBytes ?? 1 << 20;
  let pending: Buffer = Buffer.alloc(0);
  let pendingOffset = 0; // file offset of pending[0]
  let position = 0;
  // Reads fill one buffer from its free end: frames are views into it (never reused), and a follower's
  // small reads do not allocate a fresh megabyte each.
  let buf = Buffer.allocUnsafe(readBytes);
  let used = 0;
  const window = new DeltaWindow();
  let caughtUpAt = Date.now();
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted');
      if (options.follow && options.yieldTo) await untilQuiet(options.follow, options.yieldTo.quietMs, caughtUpAt + options.yieldTo.maxLagMs);
      const generation = options.follow ? Atomics.load(options.follow, PROGRESS_GENERATION) : 0;
      const closed = options.follow ? Atomics.load(options.follow, PROGRESS_CLOSED) === 1 : true;
      if (buf.length - used < readBytes >> 4) {
        // A fresh buffer, starting with the unparsed rest (usually a part of one frame): frames stay views
        // of buffers that are never written again, and only that rest is copied, never a whole read.
        const next = Buffer.allocUnsafe(Math.max(readBytes, pending.length * 2));
        pending.copy(next, 0);
        buf = next;
        used = pending.length;
        pending = buf.subarray(0, used);
      }
      // A follower reads only what the writer says is complete: past it can be a padded block (direct I/O).
      const want = options.follow ? Math.min(buf.length - used, committedBytes(options.follow) - position) : buf.length - used;
      const { bytesRead } = want <= 0 ? { bytesRead: 0 } : direct ? { bytesRead: await direct.read(buf, used, want, position) } : await handle!.read(buf, used, want, position);
      if (bytesRead === 0) {
        caughtUpAt = Date.now();
        if (closed) break;
        await waitForWrite(options.follow!, generation);
        continue;
      }
      position += bytesRead;
      // pending always ends where the free part of buf begins, so the new bytes extend it in place.
      pending = pending.length === 0 ? buf.subarray(used, used + bytesRead) : buf.subarray(used - pending.length, used + bytesRead);
      used += bytesRead;
      let at = 0;
      for (;;) {
        // NULs where a frame would start: the padded last block of a direct-I/O writer that stopped without
        // closing its log (a follower never reads that far). A frame never starts with one.
        while (at < pending.length && pending[at] === 0) at++;
        const nl = pending.indexOf(10, at);
        if (nl === -1) break;
        const header = parseHeader(pending, at, nl, path, pendingOffset + at);
        const end = nl + 1 + header.n;
        if (pending.length < end + 1) break;
        if (pending[end] !== 10) {
          // A frame cut by the end of a direct-I/O log (its bytes run into the zeros of the padding) is a
          // truncated log; anything else is a corrupt one.
          if (pending.subarray(end).every((b) => b === 0)) break;
          throw new RollerError(ErrorCode.WIRE_LOG_CORRUPT, `${path}: byte ${pendingOffset + end}: the frame at byte ${pendingOffset + at} does not end where its header says; the log is corrupt from here (frames before it are intact)`, {
            origin: { file: path, offset: pendingOffset + at },
          });
        }
        let body = pending.subarray(nl + 1, end);
        if (header.k === 'q') body = wholeRequestBody(header, body, window, options.bodies);
        yield { c: header.c, k: header.k, ...(header.m === undefined ? {} : { m: header.m }), body, offset: pendingOffset + at };
        at = end + 1;
        // A request is the costly frame to project (its body parsed, later its response decoded): look again
        // whether forwarding needs the CPU, not only once per read of up to readBytes (tens of calls).
        if (header.k === 'q' && options.follow && options.yieldTo) await untilQuiet(options.follow, options.yieldTo.quietMs, caughtUpAt + options.yieldTo.maxLagMs);
      }
      pending = pending.subarray(at);
      pendingOffset += at;
    }
    // Trailing NULs are a direct-I/O writer's padding, not log bytes.
    let rest = pending.length;
    while (rest > 0 && pending[rest - 1] === 0) rest--;
    if (rest > 0) options.onTruncated?.(rest, pendingOffset);
  } finally {
    await handle?.close();
    await direct?.close();
  }
}

/**
 * A request frame's whole body: a delta is applied (and dropped from the meta); every whole body enters
 * the window by the writer's rule. A delta whose base is missing (a log cut at the front) leaves the
 * body out, saying why.
 */
function wholeRequestBody(header: Header, bytes: Buffer, window: DeltaWindow, bodies: ReadWireOptions['bodies']): Buffer {
  const m = header.m as RequestMeta | undefined;
  if (!m) return bytes;
  if (m.body_ref) {
    // Not in the log, so not a delta base either (the writer's rule: only bytes in the log).
    const ref = m.body_ref;
    delete m.body_ref;
    const body = bodies?.(ref);
    if (!body) m.body_omitted = `its body is ${ref.file} ${ref.call_id} ${ref.pointer}, which ${bodies ? 'was not found' : 'this reader was not given'}`;
    return body ?? Buffer.alloc(0);
  }
  let body: Buffer | undefined = bytes;
  const key = conversationKey(m.identity);
  const delta = m.delta;
  if (delta) {
    body = window.decode(key, delta, bytes);
    delete m.delta;
    if (!body) {
      m.body_omitted = `its delta base ${delta.base} is not in this log`;
      return Buffer.alloc(0);
    }
  }
  if (body.length > 0 && m.content_encoding === undefined && m.body_omitted === undefined) {
    window.remember(key, header.c, body, delta); // into the window's own memory (a delta patched into its base)
  }
  return body;
}

interface Header {
  c: string;
  k: FrameKind;
  n: number;
  m?: unknown;
}

function parseHeader(buf: Buffer, from: number, nl: number, path: string, offset: number): Header {
  let h: Partial<Header> | undefined;
  try {
    h = JSON.parse(buf.toString('utf8', from, nl)) as Partial<Header>;
  } catch {
    h = undefined;
  }
  if (!h || typeof h.c !== 'string' || typeof h.n !== 'number' || !Number.isInteger(h.n) || h.n < 0 || !['q', 'r', 'd', 'x'].includes(h.k as string)) {
    throw new RollerError(ErrorCode.WIRE_LOG_CORRUPT, `${path}: byte ${offset}: not a wire frame header; the log is corrupt from here (frames before it are intact)`, {
      origin: { file: path, offset },
    });
  }
  return h as Header;
}

/** Atomics.waitAsync (Node >= 16; typed only from lib es2024, which our target does not include). */
type WaitAsync = (a: Int32Array, index: number, value: number, timeoutMs: number) => { async: boolean; value: unknown };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * Until the writer's next completed write (or the poll interval). The timer is what keeps a worker's
 * event loop alive: a pending Atomics.waitAsync does not.
 */
async function waitForWrite(progress: Int32Array, generation: number): Promise<void> {
  const r = waitAsync(progress, PROGRESS_GENERATION, generation, FOLLOW_POLL_MS);
  if (!r.async) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([r.value, new Promise((resolve) => (timer = setTimeout(resolve, FOLLOW_POLL_MS)))]);
  clearTimeout(timer);
}

/**
 * Until the proxy has no exchange open and has written nothing for `quietMs`, the log is closed, or
 * `deadline` (epoch ms) passed.
 */
async function untilQuiet(progress: Int32Array, quietMs: number, deadline: number): Promise<void> {
  for (;;) {
    const now = Date.now();
    const idle = now - lastWriteAt(progress);
    const open = Atomics.load(progress, PROGRESS_OPEN_EXCHANGES);
    if ((open <= 0 && idle >= quietMs) || now >= deadline || Atomics.load(progress, PROGRESS_CLOSED) === 1) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(open > 0 ? quietMs : quietMs - idle, deadline - now)));
  }
}

/** The raw response bytes of one call (HTTP body chunks or WebSocket messages), in order. */
export async function* readRawResponse(path: string, callId: string): AsyncGenerator<Buffer> {
  for await (const f of readWireFrames(path)) if (f.c === callId && f.k === 'd') yield Buffer.from(f.body);
}
