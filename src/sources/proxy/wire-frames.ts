import { open } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { conversationKey, DeltaWindow } from './body-delta.js';
import type { BodyRef, FrameKind, RequestMeta } from './wire-format.js';
import type { WireFollow } from './wire-log.js';

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
  /** Follow a log that is still being written (its writer, in this thread): wait for more until it is closed. */
  follow?: WireFollow;
  signal?: AbortSignal;
  readBytes?: number;
  /** Resolves the body of a request frame that holds a body_ref (a published capture's raw/). */
  bodies?: (ref: BodyRef) => Buffer | undefined;
  /** Called when the log ends inside a frame (a crash mid-write): how many bytes were left over. */
  onTruncated?(bytes: number, offset: number): void;
}

/**
 * The frames of a wire log, in order, each request with its whole body (a streamed body's b frames joined into its q
 * frame, yielded where the body ended). A header line that is not a frame header is a corrupt log: a typed error with
 * the file and byte offset (nothing after it can be framed).
 */
export async function* readWireFrames(path: string, options: ReadWireOptions = {}): AsyncGenerator<WireFrame> {
  const window = new DeltaWindow();
  const streaming = new Map<string, { q: WireFrame; parts: Buffer[] }>();
  const whole = (f: WireFrame): WireFrame => ({ ...f, body: wholeRequestBody(f, window, options.bodies) });
  /** A streamed body that never ended (the client left, or the upstream refused it mid-way): kept out, saying why. */
  const cut = (c: string, why: string): WireFrame => {
    const { q, parts } = streaming.get(c)!;
    streaming.delete(c);
    const m = q.m as RequestMeta;
    delete m.body_streamed;
    m.body_omitted = `its body was cut after ${parts.reduce((n, p) => n + p.length, 0)} bytes (${why})`;
    return { ...q, body: Buffer.alloc(0) };
  };
  for await (const f of rawWireFrames(path, options)) {
    if (f.k === 'q' && (f.m as RequestMeta | undefined)?.body_streamed) {
      streaming.set(f.c, { q: f, parts: [f.body] });
      continue;
    }
    const streamed = streaming.get(f.c);
    if (f.k === 'b') {
      if (!streamed) continue; // the rest of a body whose request is not in this log (cut at the front)
      if ((f.m as { end?: boolean } | undefined)?.end !== true) {
        streamed.parts.push(f.body);
        continue;
      }
      streaming.delete(f.c);
      delete (streamed.q.m as RequestMeta).body_streamed;
      yield whole({ ...streamed.q, body: streamed.parts.length === 1 ? streamed.parts[0]! : Buffer.concat(streamed.parts) });
      continue;
    }
    if (streamed) yield cut(f.c, f.k === 'x' ? 'the exchange ended before it did' : 'the response began before it ended');
    yield f.k === 'q' ? whole(f) : f;
  }
  for (const c of [...streaming.keys()]) yield cut(c, 'the wire log ends before it did');
}

/** The frames as they are in the log (a streamed body still in pieces, deltas and references unresolved). */
async function* rawWireFrames(path: string, options: ReadWireOptions): AsyncGenerator<WireFrame> {
  const handle = await open(path, 'r');
  const readBytes = options.readBytes ?? 1 << 20;
  const follow = options.follow;
  let pending: Buffer = Buffer.alloc(0);
  let pendingOffset = 0; // file offset of pending[0]
  let position = 0;
  /** Bytes the frame that starts pending needs in all (known once its header is read): one read completes it. */
  let need = 0;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted');
      const closed = follow ? follow.closed : true;
      const want = Math.max(readBytes, need - pending.length);
      // A follower reads what is written so far, into a buffer of that size (its reads are small and many).
      const limit = follow ? Math.min(want, follow.committedBytes - position) : want;
      if (limit <= 0 && follow && !closed) {
        await follow.changed();
        continue;
      }
      // Frames are views of the buffer they were read into, which is never written again.
      const buf = Buffer.allocUnsafe(pending.length + Math.max(limit, 0));
      pending.copy(buf, 0);
      const { bytesRead } = limit <= 0 ? { bytesRead: 0 } : await handle.read(buf, pending.length, limit, position);
      if (bytesRead === 0) {
        if (closed) break;
        await follow?.changed();
        continue;
      }
      position += bytesRead;
      pending = buf.subarray(0, pending.length + bytesRead);
      let at = 0;
      for (;;) {
        // NULs where a frame would start: the padded last block of an older writer (direct I/O) that stopped without
        // closing its log. A frame never starts with one.
        while (at < pending.length && pending[at] === 0) at++;
        const nl = pending.indexOf(10, at);
        if (nl === -1) break;
        const header = parseHeader(pending, at, nl, path, pendingOffset + at);
        const end = nl + 1 + header.n;
        need = end + 1 - at;
        if (pending.length < end + 1) break;
        if (pending[end] !== 10) {
          if (pending.subarray(end).every((b) => b === 0)) break; // a frame cut by an older writer's padding
          throw new RollerError(ErrorCode.WIRE_LOG_CORRUPT, `${path}: byte ${pendingOffset + end}: the frame at byte ${pendingOffset + at} does not end where its header says; the log is corrupt from here (frames before it are intact)`, {
            origin: { file: path, offset: pendingOffset + at },
          });
        }
        const body = pending.subarray(nl + 1, end);
        yield { c: header.c, k: header.k, ...(header.m === undefined ? {} : { m: header.m }), body, offset: pendingOffset + at };
        at = end + 1;
        need = 0;
      }
      pending = pending.subarray(at);
      pendingOffset += at;
    }
    let rest = pending.length;
    while (rest > 0 && pending[rest - 1] === 0) rest--;
    if (rest > 0) options.onTruncated?.(rest, pendingOffset);
  } finally {
    await handle.close();
  }
}

/**
 * A request frame's whole body: a delta is applied (and dropped from the meta); every whole body enters
 * the window by the writer's rule. A delta whose base is missing (a log cut at the front) leaves the
 * body out, saying why.
 */
function wholeRequestBody(frame: WireFrame, window: DeltaWindow, bodies: ReadWireOptions['bodies']): Buffer {
  const bytes = frame.body;
  const m = frame.m as RequestMeta | undefined;
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
    window.remember(key, frame.c, body);
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
  if (!h || typeof h.c !== 'string' || typeof h.n !== 'number' || !Number.isInteger(h.n) || h.n < 0 || !['q', 'b', 'r', 'd', 'x', 'u'].includes(h.k as string)) {
    throw new RollerError(ErrorCode.WIRE_LOG_CORRUPT, `${path}: byte ${offset}: not a wire frame header; the log is corrupt from here (frames before it are intact)`, {
      origin: { file: path, offset },
    });
  }
  return h as Header;
}

/** The raw response bytes of one call (HTTP body chunks or WebSocket messages), in order. */
export async function* readRawResponse(path: string, callId: string): AsyncGenerator<Buffer> {
  for await (const f of readWireFrames(path)) if (f.c === callId && f.k === 'd') yield Buffer.from(f.body);
}
