import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FrameError, FrameReader, OPCODE, encodeFrame } from '../../../src/sources/proxy/websocket-frames.js';
import { seededBytes, seededRandom as rng } from '../../support/seeded-random.js';

// ws's own parser and encoder, the reference the frame reader is held to.
const require = createRequire(import.meta.url);
const { Receiver, Sender } = require('ws') as { Receiver: new (o: object) => WsReceiver; Sender: { frame(data: Buffer, o: object): Buffer[] } };
interface WsReceiver {
  write(chunk: Buffer): boolean;
  on(event: string, fn: (...args: never[]) => void): void;
}

type Seen = string[];
const MAX = 300_000;

/** What ws's Receiver makes of a stream fed in these chunks: messages and control frames in order, then its error. */
async function throughWs(chunks: Buffer[], isServer: boolean): Promise<Seen> {
  const seen: Seen = [];
  const receiver = new Receiver({ isServer, maxPayload: MAX, skipUTF8Validation: true });
  let failed = false;
  receiver.on('message', ((data: Buffer | Buffer[], isBinary: boolean) => seen.push(`${isBinary ? 'binary' : 'text'} ${Buffer.concat([data].flat()).toString('hex')}`)) as never);
  receiver.on('ping', ((d: Buffer) => seen.push(`ping ${d.toString('hex')}`)) as never);
  receiver.on('pong', ((d: Buffer) => seen.push(`pong ${d.toString('hex')}`)) as never);
  receiver.on('conclude', ((code: number, reason: Buffer) => seen.push(`close ${code} ${reason.toString('hex')}`)) as never);
  receiver.on('error', ((err: Error & Record<symbol, number>) => {
    failed = true;
    // ws keeps the close code under its own symbol (not exported): found by its description.
    const status = Object.getOwnPropertySymbols(err).find((s) => s.description === 'status-code')!;
    seen.push(`error ${err[status]}`);
  }) as never);
  for (const c of chunks) {
    if (failed) break;
    receiver.write(c);
    await new Promise((r) => setImmediate(r)); // ws reports an error a tick later
  }
  return seen;
}

/** The same through the frame reader; also checks that the raw pieces put back together are the stream itself. */
function throughReader(chunks: Buffer[], isServer: boolean): Seen {
  const seen: Seen = [];
  const reader = new FrameReader({ expectMasked: isServer, maxMessageBytes: MAX });
  const raw: Buffer[] = [];
  let message: Buffer[] = [];
  let control: Buffer[] = [];
  try {
    for (const c of chunks) {
      for (const e of reader.push(c)) {
        raw.push(e.raw);
        if (e.kind === 'head') continue;
        (e.head.opcode >= 8 ? control : message).push(e.data);
        if (!e.last) continue;
        if (e.head.opcode >= 8) {
          const payload = Buffer.concat(control);
          control = [];
          if (e.head.opcode === OPCODE.close) {
            seen.push(`close ${payload.length < 2 ? 1005 : payload.readUInt16BE(0)} ${payload.subarray(2).toString('hex')}`);
            return seen; // ws reads nothing after a close frame
          }
          seen.push(`${e.head.opcode === OPCODE.ping ? 'ping' : 'pong'} ${payload.toString('hex')}`);
        } else if (e.head.fin) {
          seen.push(`${e.head.message === OPCODE.binary ? 'binary' : 'text'} ${Buffer.concat(message).toString('hex')}`);
          message = [];
        }
      }
    }
  } catch (err) {
    if (!(err instanceof FrameError)) throw err;
    seen.push(`error ${err.closeCode}`);
    return seen;
  }
  // Every byte comes back as read, but a frame head cut short at the end (at most 14 bytes), which the reader holds.
  const all = Buffer.concat(chunks);
  const back = Buffer.concat(raw);
  expect(all.subarray(0, back.length).equals(back)).toBe(true);
  expect(all.length - back.length).toBeLessThanOrEqual(reader.atBoundary ? 0 : 14);
  return seen;
}

/** A random session: messages cut in fragments, pings and pongs between them, framed by ws's Sender. */
function session(next: () => number, masked: boolean): Buffer {
  const frames: Buffer[] = [];
  const frame = (opcode: number, data: Buffer, fin: boolean) => frames.push(Buffer.concat(Sender.frame(data, { fin, opcode, mask: masked, readOnly: true, rsv1: false })));
  const n = 1 + Math.floor(next() * 8);
  for (let m = 0; m < n; m++) {
    const size = next() < 0.1 ? 65_536 + Math.floor(next() * 100_000) : Math.floor(next() * (next() < 0.5 ? 200 : 70_000));
    const data = seededBytes(next, size);
    const parts = 1 + Math.floor(next() * 4);
    for (let p = 0, at = 0; p < parts; p++) {
      const end = p === parts - 1 ? size : at + Math.floor(next() * (size - at));
      frame(p === 0 ? (next() < 0.5 ? OPCODE.text : OPCODE.binary) : OPCODE.continuation, data.subarray(at, end), p === parts - 1);
      at = end;
      if (next() < 0.3) frame(next() < 0.5 ? OPCODE.ping : OPCODE.pong, seededBytes(next, Math.floor(next() * 126)), true);
    }
  }
  if (next() < 0.5) frame(OPCODE.close, Buffer.concat([Buffer.from([0x03, 0xe8]), seededBytes(next, Math.floor(next() * 20))]), true);
  return Buffer.concat(frames);
}

/** The stream cut at random places (1 byte to 100 KB). */
function cut(stream: Buffer, next: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < stream.length; ) {
    const n = 1 + Math.floor(next() * (next() < 0.3 ? 16 : 100_000));
    chunks.push(stream.subarray(at, at + n));
    at += n;
  }
  return chunks;
}

describe('FrameReader, differential against ws', () => {
  it.each([true, false])('sound sessions (client frames masked: %s): the same messages and control frames in order, the raw bytes unchanged', async (masked) => {
    for (let seed = 1; seed <= 150; seed++) {
      const next = rng(seed);
      const chunks = cut(session(next, masked), next);
      expect(throughReader(chunks, masked), `seed ${seed}`).toEqual(await throughWs(chunks, masked));
    }
  });

  it('corrupted sessions (a byte flipped, a frame dropped or cut): refused with the same close code at the same point', async () => {
    let refused = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const next = rng(seed);
      const stream = Buffer.from(session(next, true));
      const how = next();
      let bad = stream;
      if (how < 0.6) {
        // Flip bits in one of the first bytes of the stream or anywhere: heads are what the checks read.
        const at = Math.floor(next() * Math.min(stream.length, next() < 0.5 ? 16 : stream.length));
        bad[at] = bad[at]! ^ (1 << Math.floor(next() * 8));
      } else if (how < 0.8) bad = stream.subarray(Math.floor(next() * Math.min(stream.length, 20)));
      else bad = Buffer.concat([stream, seededBytes(next, Math.floor(next() * 40))]);
      const chunks = cut(bad, next);
      const ours = throughReader(chunks, true);
      expect(ours, `seed ${seed}`).toEqual(await throughWs(chunks, true));
      if (ours.at(-1)?.startsWith('error')) refused++;
    }
    expect(refused).toBeGreaterThan(100); // the corruptions do reach the checks
  });

  it('a message past the limit is refused with 1009 before its payload arrives; so is a length past 2^53 - 1', async () => {
    const over = Buffer.concat(Sender.frame(Buffer.alloc(MAX + 1), { fin: true, opcode: OPCODE.binary, mask: true, readOnly: true, rsv1: false }));
    const head = [over.subarray(0, 14)];
    expect(throughReader(head, true)).toEqual(['error 1009']);
    expect(await throughWs(head, true)).toEqual(['error 1009']);
    const huge = Buffer.from([0x82, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]);
    expect(throughReader([huge], true)).toEqual(await throughWs([huge], true));
  });

  it('frames it encodes are read back by ws (masked toward a server, plain toward a client)', async () => {
    for (const masked of [true, false]) {
      for (const size of [0, 125, 126, 65_535, 65_536, 100_000]) {
        const data = randomBytes(size);
        expect(await throughWs([encodeFrame(OPCODE.binary, data, masked)], masked)).toEqual([`binary ${data.toString('hex')}`]);
      }
    }
  });
});
