import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReadArena } from '../../../src/core/read-arena.js';
import { readCallsLazily } from '../../../src/sources/archive/calls-reader.js';
import { rawContextBytesOf } from '../../../src/schemas/call-context.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('read-arena');

describe('ReadArena', () => {
  it('hands out consecutive views of one buffer, takes back the unused end of the last one, and starts over on reset', () => {
    const arena = new ReadArena(64, 1024);
    const a = arena.take(10);
    const b = arena.take(20);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 10);
    arena.giveBack(b, 5); // only 5 of 20 used
    const c = arena.take(4);
    expect(c.byteOffset).toBe(b.byteOffset + 5);
    arena.giveBack(a, 0); // not the last take: nothing to give back
    expect(arena.take(1).byteOffset).toBe(c.byteOffset + 4);
    arena.reset();
    expect(arena.take(8).byteOffset).toBe(a.byteOffset); // the same pages, job after job
  });

  it('grows when a job needs more (earlier views keep their bytes), and never keeps a buffer over its limit', () => {
    const arena = new ReadArena(16, 64);
    const first = arena.take(12);
    first.fill(1);
    const grown = arena.take(12);
    expect(grown.buffer).not.toBe(first.buffer);
    grown.fill(2);
    expect([...first]).toEqual(new Array(12).fill(1));
    const huge = arena.take(100); // over maxBytes: a buffer of its own
    expect(huge.length).toBe(100);
    arena.reset();
    expect(arena.take(20).buffer).toBe(grown.buffer);
  });

  it('reserve makes room before the reads, so a file larger than the arena lands in one new buffer', () => {
    const arena = new ReadArena(16, 1024);
    const before = arena.take(4);
    arena.reset();
    arena.reserve(40);
    const parts = [arena.take(16), arena.take(16), arena.take(8)];
    expect(parts[0]!.buffer).not.toBe(before.buffer);
    for (const p of parts) expect(p.buffer).toBe(parts[0]!.buffer); // no growth in the middle of the file
    arena.reset();
    arena.reserve(2000); // past maxBytes: the arena stays as it is (the reads that do not fit get buffers of their own)
    expect(arena.take(8).buffer).toBe(parts[0]!.buffer);
    expect(arena.take(2000).buffer).not.toBe(parts[0]!.buffer);
  });
});

describe('readCallsLazily into an arena', () => {
  it('reads the same calls as into fresh buffers, across many chunks and short reads, job after job', async () => {
    const path = join(tmp.path, 'calls.jsonl');
    // Lines of 10-300 KB: the reader's chunks (64 KB-4 MB) end inside lines and inside contexts.
    const lines: string[] = [];
    for (let i = 0; i < 40; i++) {
      const text = `${i}:${'x'.repeat(10_000 + ((i * 7919) % 290_000))}`;
      lines.push(JSON.stringify({ schema: 'roller.call/v1', call_id: `c-${i}`, seq: i, protocol: 'anthropic-messages', native_identity: {}, context: { messages: [{ role: 'user', content: text }] } }));
    }
    writeFileSync(path, `${lines.join('\n')}\n`);
    const fresh = await readCallsLazily(path);
    const arena = new ReadArena(1 << 20, 64 << 20);
    for (let job = 0; job < 3; job++) {
      arena.reset();
      const calls = await readCallsLazily(path, { arena });
      expect(calls.map((c) => c.call_id)).toEqual(fresh.map((c) => c.call_id));
      expect(calls.map((c) => rawContextBytesOf(c)!.toString())).toEqual(fresh.map((c) => rawContextBytesOf(c)!.toString()));
      // The arena made room for the whole file up front: every context is a view of one buffer.
      expect(new Set(calls.map((c) => rawContextBytesOf(c)!.buffer)).size).toBe(1);
    }
  });
});
