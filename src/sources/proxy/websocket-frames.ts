import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';

/** ws's native masking (its optional peer, pinned here): XOR by a 4-byte key in place, with a JS fallback. */
const bufferUtil = createRequire(import.meta.url)('bufferutil') as { unmask(buffer: Buffer, mask: Buffer): void };

/**
 * WebSocket frames (RFC 6455 §5) read as they arrive, for a relay that forwards bytes without assembling messages: a
 * message of tens of megabytes costs no allocation of its size (ws assembles each message into one fresh buffer, a
 * stall of the event loop that every other exchange on the proxy waits out). The differential tests hold it to ws's
 * own Receiver on random frame streams cut at random places.
 */

export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

export interface FrameHead {
  fin: boolean;
  opcode: number;
  masked: boolean;
  /** The payload's length in bytes. */
  length: number;
  /** A data frame's message kind (text 1 or binary 2, a continuation's too); a control frame's own opcode. */
  message: number;
}

/** What the reader found, in wire order. `raw` is each piece's bytes as received (to forward unchanged). */
export type FrameEvent =
  | { kind: 'head'; head: FrameHead; raw: Buffer }
  /** A piece of the current frame's payload: `data` unmasked; `last` on the frame's final piece. */
  | { kind: 'payload'; head: FrameHead; raw: Buffer; data: Buffer; last: boolean };

/** A stream that breaks the protocol: the close code to send (1002 protocol error, 1009 too big) and why. */
export class FrameError extends Error {
  constructor(
    readonly closeCode: 1002 | 1009,
    message: string,
  ) {
    super(message);
  }
}

export interface FrameReaderOptions {
  /** Frames from a client must be masked, from a server must not be (§5.1). */
  expectMasked: boolean;
  /** The most bytes one message's payload may have (its fragments together). */
  maxMessageBytes: number;
}

/**
 * Reads one direction of a WebSocket connection: feed it the socket's chunks, get back heads and payload pieces (a
 * piece never spans two frames). Checks what a relay must not pass on: reserved bits (no extension is negotiated),
 * unknown opcodes, control frames fragmented or over 125 bytes, a continuation with no message or a message inside
 * another, the masking rule, and the message size.
 */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private head: FrameHead | undefined;
  private mask: Buffer | undefined;
  /** Payload bytes of the current frame still to come, and how far into it we are (for the mask's phase). */
  private left = 0;
  private at = 0;
  /** The data message a continuation belongs to (undefined between messages), and its bytes so far. */
  private message: number | undefined;
  private messageBytes = 0;

  constructor(private readonly options: FrameReaderOptions) {}

  /** Between frames: everything read so far was whole frames. */
  get atBoundary(): boolean {
    return this.head === undefined && this.pending.length === 0;
  }

  *push(chunk: Buffer): Generator<FrameEvent> {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = Buffer.alloc(0);
    while (buf.length > 0) {
      if (!this.head) {
        const parsed = this.parseHead(buf);
        if (!parsed) {
          this.pending = Buffer.from(buf); // a header cut short: at most 14 bytes kept
          return;
        }
        const { head, size, mask } = parsed;
        this.head = head;
        this.mask = mask;
        this.left = head.length;
        this.at = 0;
        yield { kind: 'head', head, raw: buf.subarray(0, size) };
        buf = buf.subarray(size);
        if (head.length === 0) {
          this.head = undefined;
          yield { kind: 'payload', head, raw: buf.subarray(0, 0), data: Buffer.alloc(0), last: true };
        }
        continue;
      }
      const n = Math.min(this.left, buf.length);
      const raw = buf.subarray(0, n);
      const data = this.mask ? unmask(raw, this.mask, this.at) : raw;
      this.left -= n;
      this.at += n;
      buf = buf.subarray(n);
      const head = this.head;
      if (this.left === 0) this.head = undefined;
      if (head.opcode === OPCODE.close) this.checkClose(data, this.left === 0);
      yield { kind: 'payload', head, raw, data, last: this.left === 0 };
    }
  }

  /** A close frame's code must be one that may be sent (§7.4): read once its two bytes are here (at most 125 come). */
  private closeBytes: Buffer = Buffer.alloc(0);
  private checkClose(data: Buffer, last: boolean): void {
    this.closeBytes = Buffer.concat([this.closeBytes, data]);
    if (!last) return;
    const payload = this.closeBytes;
    this.closeBytes = Buffer.alloc(0);
    if (payload.length >= 2 && !sendableCloseCode(payload.readUInt16BE(0))) throw new FrameError(1002, `a close frame with code ${payload.readUInt16BE(0)}, which may not be sent`);
  }

  /**
   * The frame's head, or undefined when `buf` does not hold all of it yet. Checked in ws's order, each as soon as its
   * bytes are here (the first two bytes say most of what can be wrong), so both refuse a stream at the same frame.
   */
  private parseHead(buf: Buffer): { head: FrameHead; size: number; mask: Buffer | undefined } | undefined {
    if (buf.length < 2) return undefined;
    const b0 = buf[0]!;
    const b1 = buf[1]!;
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    const masked = (b1 & 0x80) !== 0;
    let length = b1 & 0x7f;
    if ((b0 & 0x70) !== 0) throw new FrameError(1002, 'a reserved bit is set (no extension was negotiated)');
    if (opcode === 0) {
      if (this.message === undefined) throw new FrameError(1002, 'a continuation frame with no message to continue');
    } else if (opcode === 1 || opcode === 2) {
      if (this.message !== undefined) throw new FrameError(1002, 'a new message before the last one ended');
    } else if (opcode >= 8 && opcode <= 10) {
      if (!fin) throw new FrameError(1002, 'a fragmented control frame');
      if (length > 125 || (opcode === 8 && length === 1)) throw new FrameError(1002, 'a control frame of an invalid length');
    } else throw new FrameError(1002, `an unknown opcode (${opcode})`);
    if (masked !== this.options.expectMasked) throw new FrameError(1002, this.options.expectMasked ? 'a client frame that is not masked' : 'a server frame that is masked');
    let size = 2;
    if (length === 126) {
      if (buf.length < 4) return undefined;
      length = buf.readUInt16BE(2);
      size = 4;
    } else if (length === 127) {
      if (buf.length < 10) return undefined;
      const high = buf.readUInt32BE(2);
      if (high > 0x1fffff) throw new FrameError(1009, 'a frame longer than 2^53 - 1 bytes');
      length = high * 2 ** 32 + buf.readUInt32BE(6);
      size = 10;
    }
    if (opcode < 8 && (opcode === 0 ? this.messageBytes : 0) + length > this.options.maxMessageBytes) {
      throw new FrameError(1009, `a message of more than ${this.options.maxMessageBytes} bytes`);
    }
    if (masked && buf.length < size + 4) return undefined;
    // The head is whole and sound: the message state moves on.
    const message = opcode === 0 ? this.message! : opcode;
    if (opcode === 1 || opcode === 2) {
      this.message = opcode;
      this.messageBytes = 0;
    }
    if (opcode < 8) {
      this.messageBytes += length;
      if (fin) {
        this.message = undefined;
        this.messageBytes = 0;
      }
    }
    const mask = masked ? Buffer.from(buf.subarray(size, size + 4)) : undefined;
    return { head: { fin, opcode, masked, length, message }, size: size + (masked ? 4 : 0), mask };
  }
}

function unmask(raw: Buffer, mask: Buffer, phase: number): Buffer {
  const out = Buffer.from(raw);
  const p = phase & 3;
  bufferUtil.unmask(out, p === 0 ? mask : Buffer.from([mask[p]!, mask[(p + 1) & 3]!, mask[(p + 2) & 3]!, mask[(p + 3) & 3]!]));
  return out;
}

/** A frame of our own: `masked` toward a server (a fresh random key, §5.3). */
export function encodeFrame(opcode: number, payload: Buffer, masked: boolean, fin = true): Buffer {
  const extra = payload.length < 126 ? 0 : payload.length < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + extra + (masked ? 4 : 0));
  head[0] = (fin ? 0x80 : 0) | opcode;
  head[1] = (masked ? 0x80 : 0) | (extra === 0 ? payload.length : extra === 2 ? 126 : 127);
  if (extra === 2) head.writeUInt16BE(payload.length, 2);
  if (extra === 8) head.writeBigUInt64BE(BigInt(payload.length), 2);
  if (!masked) return Buffer.concat([head, payload]);
  const key = randomFillSync(Buffer.alloc(4));
  key.copy(head, 2 + extra);
  return Buffer.concat([head, unmask(payload, key, 0)]);
}

/** The close codes an endpoint may send (RFC 6455 §7.4.1-2: 1005, 1006 and 1015 describe a close, never travel in one). */
export function sendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/** A close frame's payload: the code, then the reason (UTF-8, cut to fit 125 bytes). */
export function closePayload(code: number, reason: string): Buffer {
  const text = Buffer.from(reason).subarray(0, 123);
  const out = Buffer.alloc(2 + text.length);
  out.writeUInt16BE(code, 0);
  text.copy(out, 2);
  return out;
}

/** The code and reason of a close frame's payload (1005: it had none). */
export function readClose(payload: Buffer): { code: number; reason: Buffer } {
  return payload.length < 2 ? { code: 1005, reason: Buffer.alloc(0) } : { code: payload.readUInt16BE(0), reason: payload.subarray(2) };
}
