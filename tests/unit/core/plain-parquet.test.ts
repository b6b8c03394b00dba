/**
 * The plain Parquet writer (the rl export's) against the standard readers: every row written — strings (UTF-8, empty,
 * null), int32, int64 past 2^32, float64 (NaN, extremes), int32 lists (typed, plain, empty, null, 20k long) and
 * float64 lists — reads back equal through DuckDB and hyparquet, over several row groups and shards; a failing
 * destination is the sink's typed error, nothing half-named left. (pyarrow and `datasets` read the real export in
 * tests/e2e/token-ids.test.ts.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { openFileOutput } from '../../../src/core/output.js';
import type { Columns } from '../../../src/core/parquet/columns.js';
import { plainParquetSupports } from '../../../src/core/parquet/plain-parquet.js';
import { PlainParquetShards } from '../../../src/core/parquet/plain-shards.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('plain-parquet');

const COLUMNS: Columns = [
  ['s', 'string'],
  ['i', 'int32'],
  ['b', 'int64'],
  ['f', 'float64'],
  ['ids', { list: 'int32' }],
  ['lp', { list: 'float64' }],
];

/** Rows of every kind of value, as the rl sink hands them (typed arrays, views of a larger block) and as plain arrays. */
function rows(n: number): Json[] {
  const block = Uint32Array.from({ length: 50_000 }, (_, k) => (k * 7919) % 200_000);
  return Array.from({ length: n }, (_, r) => {
    const kind = r % 5;
    return {
      s: kind === 1 ? null : kind === 2 ? '' : `row ${r} — ünïcode ✓ ${'x'.repeat(r % 300)}`,
      i: kind === 1 ? null : r - 50,
      b: kind === 1 ? null : 2 ** 40 + r,
      f: kind === 1 ? null : kind === 3 ? -1e300 : r / 7,
      ids: kind === 1 ? null : kind === 2 ? [] : kind === 3 ? Array.from({ length: r % 100 === 3 ? 20_000 : 7 }, (_, k) => k + r) : block.subarray(r % 100, (r % 100) + 10 + (r % 50) * 37),
      lp: kind === 1 ? null : kind === 2 ? new Float64Array(0) : Float64Array.from({ length: 5 + (r % 9) }, (_, k) => -k / 64 - r),
    };
  });
}

/** What a reader should see: lists as plain number arrays. */
const expected = (xs: Json[]) => xs.map((r) => ({ ...r, b: r.b === null ? null : BigInt(r.b), ids: r.ids === null ? null : Array.from(r.ids as ArrayLike<number>), lp: r.lp === null ? null : Array.from(r.lp as ArrayLike<number>) }));

async function write(dir: string, input: Json[], maxShardBytes: number): Promise<string[]> {
  const shards = new PlainParquetShards({ dir, prefix: 'part', columns: COLUMNS, maxShardBytes, open: openFileOutput, signal: new AbortController().signal });
  for (const r of input) await shards.add(r);
  return shards.finish();
}

async function hyparquetRows(files: string[]): Promise<Json[]> {
  const out: Json[] = [];
  for (const f of files) {
    const bytes = readFileSync(f);
    out.push(...((await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer })) as Json[]));
  }
  return out;
}

async function duckdbRows(files: string[]): Promise<Json[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    const list = files.map((f) => `'${f}'`).join(', ');
    const types = (await db.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet([${list}]))`)).getRowObjectsJson();
    expect(types).toEqual([
      { column_name: 's', column_type: 'VARCHAR' },
      { column_name: 'i', column_type: 'INTEGER' },
      { column_name: 'b', column_type: 'BIGINT' },
      { column_name: 'f', column_type: 'DOUBLE' },
      { column_name: 'ids', column_type: 'INTEGER[]' },
      { column_name: 'lp', column_type: 'DOUBLE[]' },
    ]);
    const read = await db.runAndReadAll(`SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet([${list}], filename = true, file_row_number = true) ORDER BY filename, file_row_number`);
    return read.getRowObjectsJS() as Json[];
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

describe('the plain Parquet writer, read by DuckDB and hyparquet', () => {
  it('writes only what it can: scalars and number lists', () => {
    expect(plainParquetSupports(COLUMNS)).toBe(true);
    expect(plainParquetSupports([['when', 'timestamp']])).toBe(false);
    expect(plainParquetSupports([['m', { list: { struct: [['a', 'string']] } }]])).toBe(false);
  });

  it('every value of every kind, over row groups and shards, reads back equal', async () => {
    const input = rows(6_000); // 1024 rows a group (~2.5 MB): several row groups per shard
    const files = await write(join(tmp.path, 'many'), input, 6 << 20);
    expect(files.length).toBeGreaterThan(1);
    const first = readFileSync(files[0]!);
    expect(parquetMetadata(first.buffer.slice(first.byteOffset, first.byteOffset + first.length) as ArrayBuffer).row_groups.length).toBeGreaterThan(1);
    expect(files.map((f) => f.split('/').pop())).toEqual(files.map((_, i) => `part-${String(i).padStart(5, '0')}-of-${String(files.length).padStart(5, '0')}.parquet`));
    const want = expected(input);
    expect(await hyparquetRows(files)).toEqual(want);
    const viaDuckdb = (await duckdbRows(files)).map((r) => ({ ...r, b: r.b === null ? null : BigInt(r.b as bigint) }));
    expect(viaDuckdb).toEqual(want);
  });

  it('no rows: one empty shard with the columns', async () => {
    const files = await write(join(tmp.path, 'empty'), [], 1 << 20);
    expect(files.map((f) => f.split('/').pop())).toEqual(['part-00000-of-00001.parquet']);
    expect(await hyparquetRows(files)).toEqual([]);
    expect(await duckdbRows(files)).toEqual([]);
  });

  it('a destination that fails mid-shard: the typed error, the shard removed on abandon', async () => {
    const dir = join(tmp.path, 'failing');
    let written = 0;
    const open = () =>
      new Writable({
        write(chunk: Buffer, _e, done) {
          written += chunk.length;
          done(written > 100_000 ? Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }) : null);
        },
      });
    const shards = new PlainParquetShards({ dir, prefix: 'part', columns: COLUMNS, maxShardBytes: 1 << 30, open, signal: new AbortController().signal });
    const failure = (async () => {
      for (const r of rows(3_000)) await shards.add(r);
      await shards.finish();
    })();
    await expect(failure).rejects.toMatchObject({ code: 'ROLLER_SINK_WRITE_FAILED', message: expect.stringMatching(/writing part rows under .* failed after \d+ rows \(no space left on device\); check disk space/) });
    await shards.abandon();
    expect(readdirSync(dir)).toEqual([]);
  });
});
