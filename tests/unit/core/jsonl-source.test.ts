import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createStageContext,
  ErrorCode,
  isRollerError,
  jsonlEnvelopes,
  jsonlFileSource,
  type Envelope,
} from '../../../src/core/index.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* chunksOf(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let prev = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut > prev) yield bytes.subarray(prev, cut);
    prev = Math.max(prev, cut);
  }
  if (prev < bytes.length) yield bytes.subarray(prev);
}
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('jsonl');

describe('jsonl source', () => {
  it('any re-chunking of a JSONL byte stream yields the same records (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.boolean(),
        async (values, rawCuts, finalNewline) => {
          const text = values.map((v) => JSON.stringify(v)).join('\n') + (finalNewline && values.length > 0 ? '\n' : '');
          const bytes = Buffer.from(text, 'utf8'); // multi-byte characters get cut mid-sequence too
          const cuts = rawCuts.map((c) => (bytes.length === 0 ? 0 : c % (bytes.length + 1)));
          const got = await collect(jsonlEnvelopes(chunksOf(bytes, cuts), createStageContext()));
          expect(got.map((e) => e.data)).toEqual(values.map((v) => JSON.parse(JSON.stringify(v)) as unknown));
          expect(got.map((e) => e.origin.line)).toEqual(values.map((_, i) => i + 1));
          // Offsets point at the first byte of each record's line.
          for (const [i, env] of got.entries()) {
            const line = Buffer.from(JSON.stringify(values[i]), 'utf8');
            expect(bytes.subarray(env.origin.offset!, env.origin.offset! + line.length).equals(line)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives each record its file, line and byte offset, and skips blank and CRLF-ended lines cleanly', async () => {
    const file = join(tmp.path, 'offsets.jsonl');
    await writeFile(file, '{"a":1}\r\n\n  \n{"b":"é"}\n');
    const got = await collect(jsonlFileSource(file)(createStageContext()));
    expect(got).toEqual<Envelope<unknown>[]>([
      { seq: 1, origin: { file, line: 1, offset: 0 }, data: { a: 1 } },
      { seq: 4, origin: { file, line: 4, offset: 13 }, data: { b: 'é' } },
    ]);
  });

  it('delivers the records before a truncated last line, then reports it with file and line', async () => {
    const file = join(tmp.path, 'truncated.jsonl');
    await writeFile(file, '{"n":1}\n{"n":2}\n{"n":3, "unfinis');
    const seen: unknown[] = [];
    let error: unknown;
    try {
      for await (const env of jsonlFileSource(file)(createStageContext())) seen.push(env.data);
    } catch (err) {
      error = err;
    }
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(isRollerError(error, ErrorCode.JSONL_TRUNCATED_LINE)).toBe(true);
    expect((error as Error).message).toContain(`${file}:3`);
  });

  it('accepts a last line without newline when it is complete JSON', async () => {
    const file = join(tmp.path, 'no-final-newline.jsonl');
    await writeFile(file, '{"n":1}\n{"n":2}');
    expect((await collect(jsonlFileSource(file)(createStageContext()))).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('throws a typed error naming file and line for invalid JSON, after delivering earlier records', async () => {
    const file = join(tmp.path, 'invalid.jsonl');
    await writeFile(file, '{"ok":1}\n{not json}\n{"ok":3}\n');
    const seen: unknown[] = [];
    await expect(async () => {
      for await (const env of jsonlFileSource(file)(createStageContext())) seen.push(env.data);
    }).rejects.toSatisfy((err) => isRollerError(err, ErrorCode.JSONL_INVALID_JSON) && (err as Error).message.includes(`${file}:2`));
    expect(seen).toEqual([{ ok: 1 }]);
  });

  it("in 'reject' mode routes bad lines to ctx.reject and keeps reading", async () => {
    const file = join(tmp.path, 'mixed.jsonl');
    const big = JSON.stringify({ big: 'x'.repeat(5000) });
    await writeFile(file, `{"ok":1}\n{oops\n${big}\n{"ok":4}\n{"half":`);
    const ctx = createStageContext();
    const got = await collect(jsonlFileSource(file, { onBadLine: 'reject', maxLineBytes: 1000, chunkBytes: 7 })(ctx));
    expect(got.map((e) => e.data)).toEqual([{ ok: 1 }, { ok: 4 }]);
    expect(ctx.rejects.map((r) => [r.code, r.origin.line])).toEqual([
      [ErrorCode.JSONL_INVALID_JSON, 2],
      [ErrorCode.JSONL_LINE_TOO_LONG, 3],
      [ErrorCode.JSONL_TRUNCATED_LINE, 5],
    ]);
    // Conservation: everything received was either emitted or rejected.
    expect(ctx.counters.get('jsonl-source', 'received')).toBe(5);
    expect(ctx.counters.get('jsonl-source', 'emitted')).toBe(2);
    expect(ctx.counters.get('jsonl-source', 'rejected')).toBe(3);
  });

  it('refuses a line over maxLineBytes without buffering it, whatever the chunking', async () => {
    const file = join(tmp.path, 'long.jsonl');
    await writeFile(file, `{"a":1}\n${JSON.stringify({ s: 'y'.repeat(100_000) })}\n`);
    for (const chunkBytes of [3, 4096, 1 << 20]) {
      const seen: unknown[] = [];
      let error: unknown;
      try {
        for await (const env of jsonlFileSource(file, { maxLineBytes: 10_000, chunkBytes })(createStageContext())) seen.push(env.data);
      } catch (err) {
        error = err;
      }
      expect(seen).toEqual([{ a: 1 }]);
      expect(isRollerError(error, ErrorCode.JSONL_LINE_TOO_LONG)).toBe(true);
      expect((error as Error).message).toContain(`${file}:2`);
    }
  });
});
