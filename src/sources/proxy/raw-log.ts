import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * All raw responses of a capture in one append-only file of frames, so that recording never costs a
 * file open per request. A frame is a JSON header line `{"c":call_id,"n":bytes}` followed by exactly
 * `n` raw bytes (as received from upstream, still content-encoded) and a '\n'. Frames of concurrent
 * calls interleave; `readRawResponse` picks one call's bytes back out, in order.
 */
export class RawResponseLog {
  private constructor(
    readonly path: string,
    private readonly out: WriteStream,
  ) {
    out.on('error', (err) => (this.failure ??= err));
  }

  private failure: Error | undefined;
  bytes = 0;

  static async open(path: string): Promise<RawResponseLog> {
    await mkdir(dirname(path), { recursive: true });
    const out = createWriteStream(path, { flags: 'a', highWaterMark: 1 << 20 });
    await once(out, 'open');
    return new RawResponseLog(path, out);
  }

  /** Appends a frame; resolves when the log can take more (drain-aware). */
  async append(callId: string, chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    // One buffer per frame: three small writes per chunk cost more than the copy.
    const header = `{"c":${JSON.stringify(callId)},"n":${chunk.length}}\n`;
    const frame = Buffer.allocUnsafe(Buffer.byteLength(header) + chunk.length + 1);
    const at = frame.write(header, 0, 'utf8');
    chunk.copy(frame, at);
    frame[frame.length - 1] = 0x0a;
    this.bytes += frame.length;
    if (!this.out.write(frame)) await once(this.out, 'drain');
  }

  get error(): Error | undefined {
    return this.failure;
  }

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
  }
}

/** The raw bytes of one call, in order, from a frames file. */
export async function* readRawResponse(path: string, callId: string): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  let need: { c: string; n: number } | undefined;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (!need) {
        const nl = pending.indexOf(10);
        if (nl === -1) break;
        need = JSON.parse(pending.toString('utf8', 0, nl)) as { c: string; n: number };
        pending = pending.subarray(nl + 1);
      }
      if (pending.length < need.n + 1) break;
      if (need.c === callId) yield Buffer.from(pending.subarray(0, need.n));
      pending = pending.subarray(need.n + 1);
      need = undefined;
    }
  }
}
