import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../src/core/line-splitter.js';

function split(chunks: Buffer[], stableChunks: boolean): Buffer[] {
  const lines: Buffer[] = [];
  const splitter = new LineSplitter(1 << 20, { stableChunks });
  // Copies for the copying splitter (its caller may reuse a chunk); views for the stable one (it keeps them).
  const sink = { line: (b: Buffer, s: number, e: number) => lines.push(stableChunks ? b.subarray(s, e) : Buffer.from(b.subarray(s, e))), oversize: () => undefined };
  for (const c of chunks) splitter.push(c, sink);
  const tail = splitter.finish();
  if (tail) lines.push(tail.buf);
  return lines;
}

/** The same bytes cut at the given places, as views laid end to end in one allocation (a ReadArena's reads). */
function endToEnd(bytes: Buffer, cuts: number[]): Buffer[] {
  const arena = Buffer.from(bytes);
  const at = [0, ...[...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b), bytes.length];
  return at.slice(1).map((end, i) => arena.subarray(at[i], end));
}

describe('LineSplitter', () => {
  const text = fc.array(fc.stringMatching(/^[a-z\n]{0,40}$/), { maxLength: 8 }).map((p) => Buffer.from(p.join('\n')));

  it('stable end-to-end chunks: the same lines as the copying splitter, and lines across chunks are views, not copies', () => {
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (bytes, cuts) => {
        const chunks = endToEnd(bytes, cuts);
        const stable = split(chunks, true);
        expect(stable.map(String)).toEqual(split(chunks.map((c) => Buffer.from(c)), false).map(String));
        for (const line of stable) if (line.length > 0) expect(line.buffer).toBe(chunks[0]!.buffer);
      }),
      { numRuns: 500 },
    );
  });

  it('stable chunks that are not end to end are joined by a copy', () => {
    // Buffer.alloc: never slices of Node's shared pool, which could happen to lie end to end.
    const a = Buffer.alloc(6, 'one\ntw');
    const b = Buffer.alloc(7, 'o\nthree');
    const lines = split([a, b], true);
    expect(lines.map(String)).toEqual(['one', 'two', 'three']);
    expect(lines[1]!.buffer).not.toBe(a.buffer);
  });
});
