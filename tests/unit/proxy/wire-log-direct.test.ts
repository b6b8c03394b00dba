import { closeSync, constants, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isRollerError } from '../../../src/core/errors.js';
import { readWireFrames, WireLogWriter } from '../../../src/sources/proxy/index.js';
import { PROGRESS_GENERATION } from '../../../src/sources/proxy/wire-log.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('wire-direct');

/** Does this directory's file system take O_DIRECT? (ext4, xfs, btrfs and, since Linux 6.6, tmpfs do; some FUSE file systems do not.) */
function takesDirectIo(dir: string): boolean {
  const probe = join(dir, `probe-${process.pid}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT));
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}

/** How this process has `path` open: for each descriptor, whether for writing and whether with O_DIRECT (Linux /proc). */
function openModes(path: string): { write: boolean; direct: boolean }[] {
  const modes: { write: boolean; direct: boolean }[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target !== path) continue;
    const flags = parseInt(/flags:\s*([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!, 8);
    modes.push({ write: (flags & 3) !== 0, direct: (flags & constants.O_DIRECT) !== 0 });
  }
  return modes;
}

/** The request body of frame i: sizes around the 4 KB block and bigger than a 256 KB slab. */
function requestBody(i: number): Buffer {
  const size = i % 97 === 0 ? 300_000 + i : i % 7 === 0 ? 4096 + (i % 3) - 1 : 1 + ((i * 131) % 9000);
  const body = Buffer.alloc(size, 97 + (i % 26));
  body.write(`request ${i} `, 0); // differs from its predecessor near the front: sometimes a delta, sometimes not
  // Every 50th: its predecessor in the session (i - 3) with a 270 KB turn in the middle — a delta whose middle is
  // bigger than a slab, taken from the body at an offset.
  if (i % 50 === 0 && i >= 3) {
    const prev = requestBody(i - 3);
    return Buffer.concat([prev.subarray(0, prev.length >> 1), Buffer.alloc(270_000, 65 + (i % 20)), prev.subarray(prev.length >> 1)]);
  }
  return body;
}

/** Frames of every size class: tiny, around the 4 KB block, bigger than a 256 KB slab, with deltas and metas. */
async function writeFrames(w: WireLogWriter, pauses: boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const id = `c-dio-${String(i).padStart(6, '0')}`;
    const body = requestBody(i);
    await w.appendRequest(id, { seq: i, transport: 'http', protocol: 'anthropic-messages', method: 'POST', path: '/v1/messages', upstream_path: '/v1/messages', started_at: 1_764_000_000_000 + i, identity: { session_id: `s-${i % 3}` }, dropped: [] }, body);
    w.append(id, 'r', { status: 200, headers: { 'content-type': 'text/event-stream' } });
    w.append(id, 'd', undefined, Buffer.alloc(1 + ((i * 977) % 12_000), 48 + (i % 10)));
    w.append(id, 'x', { first_byte_at: 1, ended_at: 2, upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] });
    if (pauses && i % 40 === 0) await new Promise((r) => setTimeout(r, 7)); // past the flush delay: writes interleave
  }
}

describe('wire log with direct I/O (O_DIRECT: whole aligned blocks, the last one padded and rewritten)', () => {
  it('writes the same bytes as the page-cache writer, across slabs, big bodies and interleaved writes, and ends where the log does', async () => {
    const direct = await WireLogWriter.open(join(tmp.path, 'direct', 'wire.frames'), { direct: true });
    const buffered = await WireLogWriter.open(join(tmp.path, 'buffered', 'wire.frames'), { direct: false });
    // Where the file system takes O_DIRECT (CI's and this project's machines: ext4) the writer must use it.
    expect(direct.direct).toBe(takesDirectIo(tmp.path));
    expect(buffered.direct).toBe(false);
    await writeFrames(direct, true);
    await writeFrames(buffered, false);
    await Promise.all([direct.close(), buffered.close()]);
    const a = await readFile(direct.path);
    const b = await readFile(buffered.path);
    expect(a.length).toBe(direct.bytes);
    expect(Buffer.compare(a, b)).toBe(0);
    let frames = 0;
    let deltas = 0;
    for await (const f of readWireFrames(direct.path)) {
      if (f.k !== 'q') continue;
      expect(f.body.equals(requestBody(frames))).toBe(true);
      frames++;
    }
    expect(frames).toBe(600);
    // The 270 KB middles went in as deltas (header lines as written: the reader gives back whole bodies).
    for (let at = 0; at < a.length; ) {
      const header = JSON.parse(a.toString('utf8', at, a.indexOf(10, at))) as { c: string; k: string; n: number; m?: { delta?: unknown } };
      if (header.k === 'q' && header.m?.delta && header.n >= 270_000) deltas++;
      at = a.indexOf(10, at) + 1 + header.n + 1;
    }
    expect(deltas).toBe(10); // 11 such bodies; frame 350's predecessor (458 bytes) saves too little for a delta
  });

  it('an existing log that ends inside a block is appended to through the page cache, and reads whole', async () => {
    const path = join(tmp.path, 'existing', 'wire.frames');
    const first = await WireLogWriter.open(path, { direct: false });
    first.append('c-old-1', 'd', undefined, Buffer.from('before'));
    await first.close();
    expect(statSync(path).size % 4096).not.toBe(0);
    // Direct writes could only rewrite that partial block from a copy of it: the writer takes the page cache instead.
    const again = await WireLogWriter.open(path, { direct: true });
    expect(again.direct).toBe(false);
    again.append('c-new-1', 'd', undefined, Buffer.from('after'));
    await again.close();
    const bodies: string[] = [];
    for await (const f of readWireFrames(path)) bodies.push(`${f.c}:${f.body.toString()}`);
    expect(bodies).toEqual(['c-old-1:before', 'c-new-1:after']);
  });

  it('a follower reads only what is committed, never the padding of the block being completed', async () => {
    const w = await WireLogWriter.open(join(tmp.path, 'follow', 'wire.frames'), { direct: true });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const f of readWireFrames(w.path, { follow: w.progress, readBytes: 4096 })) seen.push(`${f.c}:${f.body.length}`);
    })();
    const expected: string[] = [];
    for (let i = 0; i < 300; i++) {
      const n = 1 + ((i * 389) % 5000);
      w.append(`c-f-${String(i).padStart(6, '0')}`, 'd', undefined, Buffer.alloc(n, 120));
      expected.push(`c-f-${String(i).padStart(6, '0')}:${n}`);
      // Small gaps: each write ends inside a block that the next one rewrites while the follower reads.
      if (i % 5 === 0) await new Promise((r) => setTimeout(r, 6));
    }
    // The follower of a direct writer reads with O_DIRECT too (the log stays out of the page cache).
    // Two descriptors on the log: the writer's and the follower's (which opens no second, buffered one).
    const modes = openModes(w.path);
    expect(modes).toHaveLength(2);
    expect(modes).toEqual(expect.arrayContaining([{ write: true, direct: w.direct }, { write: false, direct: w.direct }]));
    await w.close();
    await reading;
    expect(seen).toEqual(expected);
  });

  it('a log whose writer stopped without closing it (padded with NULs) reads as its frames, a frame cut by the end as truncated', async () => {
    const dir = join(tmp.path, 'crash');
    const w = await WireLogWriter.open(join(dir, 'wire.frames'), { direct: true });
    if (!w.direct) throw new Error(`${dir} does not take O_DIRECT: this test needs a file system that does (ext4)`);
    const generation = Atomics.load(w.progress, PROGRESS_GENERATION);
    for (let i = 0; i < 3; i++) w.append(`c-crash-${i}`, 'd', undefined, Buffer.from(`chunk ${i}`));
    while (Atomics.load(w.progress, PROGRESS_GENERATION) === generation) await new Promise((r) => setTimeout(r, 2));
    // Not closed, as after a crash: the file holds whole blocks, the log then NULs.
    const onDisk = await readFile(w.path);
    expect(onDisk.length % 4096).toBe(0);
    expect(onDisk.length).toBeGreaterThan(w.bytes);
    expect(onDisk.subarray(w.bytes).every((b) => b === 0)).toBe(true);
    const truncated: number[] = [];
    const bodies: string[] = [];
    for await (const f of readWireFrames(w.path, { onTruncated: (n) => truncated.push(n) })) bodies.push(f.body.toString());
    expect(bodies).toEqual(['chunk 0', 'chunk 1', 'chunk 2']);
    expect(truncated).toEqual([]);

    // A frame whose bytes stop inside the padding: the frames before it, and the cut one reported as truncated.
    const cut = Buffer.concat([onDisk.subarray(0, w.bytes), Buffer.from('{"c":"c-crash-3","k":"d","n":100}\nonly twelve!')]);
    const padded = Buffer.alloc(Math.ceil(cut.length / 4096) * 4096);
    cut.copy(padded);
    const cutPath = join(dir, 'cut.frames');
    await writeFile(cutPath, padded);
    const cutBodies: string[] = [];
    for await (const f of readWireFrames(cutPath, { onTruncated: (n) => truncated.push(n) })) cutBodies.push(f.body.toString());
    expect(cutBodies).toEqual(['chunk 0', 'chunk 1', 'chunk 2']);
    expect(truncated).toEqual([cut.length - w.bytes]);
    await w.close();
  });

  it('a frame that does not end where its header says, with log bytes after it, is a corrupt log (typed error, byte offset)', async () => {
    const path = join(tmp.path, 'corrupt.frames');
    const good = '{"c":"c-1","k":"d","n":3}\nabc\n';
    await writeFile(path, `${good}{"c":"c-2","k":"d","n":3}\nabcdef\n{"c":"c-3","k":"d","n":1}\nz\n`);
    const seen: string[] = [];
    const err = await (async () => {
      for await (const f of readWireFrames(path)) seen.push(f.c);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['c-1']);
    expect(isRollerError(err, ErrorCode.WIRE_LOG_CORRUPT)).toBe(true);
    expect((err as Error).message).toContain(`byte ${Buffer.byteLength(good) + '{"c":"c-2","k":"d","n":3}\n'.length + 3}`);
  });
});
