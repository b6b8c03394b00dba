import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import _ from 'highland';
import { describe, expect, it } from 'vitest';
import { createJsonlSink, fromHighland, mapStage, through, toHighland, type SinkReport } from '../../../src/core/index.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('hl');

describe('highland adapter', () => {
  it('composes stages with _(source).through(stage).through(sink)', async () => {
    const double = mapStage('double', (n: number) => ({ n: n * 2 }));
    const path = join(tmp.path, 'out.jsonl');
    const reports = await _([1, 2, 3])
      .through(through(double))
      .through(through(createJsonlSink({ path })))
      .collect()
      .toPromise(Promise);
    expect((reports[0] as SinkReport).written).toBe(3);
    expect(await readFile(path, 'utf8')).toBe('{"n":2}\n{"n":4}\n{"n":6}\n');
  });

  it('is lazy both ways: highland pulls from an async iterable only as fast as it consumes', async () => {
    let produced = 0;
    async function* source() {
      for (let i = 0; i < 1000; i++) {
        produced++;
        yield i;
      }
    }
    const first = await toHighland(source()).take(5).collect().toPromise(Promise);
    expect(first).toEqual([0, 1, 2, 3, 4]);
    expect(produced).toBeLessThanOrEqual(6);

    const back: number[] = [];
    for await (const x of fromHighland(_([10, 20, 30]))) back.push(x);
    expect(back).toEqual([10, 20, 30]);
  });

  it('carries errors through', async () => {
    const boom = mapStage('boom', (n: number) => {
      if (n === 2) throw new Error('bad 2');
      return n;
    });
    await expect(_([1, 2, 3]).through(through(boom)).collect().toPromise(Promise)).rejects.toThrow('bad 2');
  });
});
