/**
 * The run-level SFT files of a reprocess, written as samples finish: request order whatever order they finish
 * in; lines ahead of their turn past the memory bound wait in files; a row contributes only when the output
 * holds its sample and it is ok or reused; nothing replaces the run's files before commit.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OrderedRunSft } from '../../../src/pipelines/reprocess/ordered-run-sft.js';
import type { RunInfo } from '../../../src/schemas/run-info.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('ordered-sft');
type Row = RunInfo['samples'][number];

const line = (n: number) => Buffer.from(`{"sample":${n},"messages":[]}\n`);

/** An output tree: rows 0-3 have a sample info.json (row 2's SFT lives in its files), row 4 none; row 3 failed. */
function outputTree(name: string): { out: string; rows: Row[] } {
  const out = join(tmp.path, name);
  const rows = [0, 1, 2, 3, 4].map((i) => ({ path: `samples/m/${i}_t`, status: i === 3 ? 'error' : 'ok' }) as Row);
  for (const i of [0, 1, 2, 3]) {
    const dir = join(out, rows[i]!.path);
    mkdirSync(dir, { recursive: true });
    const info = { status: rows[i]!.status, runtime: { sft_eligibility: { eligible: true } }, trajectory: { sft: 'trace_SFT.json' } };
    writeFileSync(join(dir, 'info.json'), JSON.stringify(info, null, 2));
    writeFileSync(join(dir, 'trace_SFT.json'), JSON.stringify({ sample: i, from: 'files' }, null, 2));
  }
  return { out, rows };
}

describe('OrderedRunSft', () => {
  it('writes rows in request order as they settle; lines past the memory bound wait in spill files', async () => {
    const { out, rows } = outputTree('order');
    const spill = join(out, '.spill');
    const sft = new OrderedRunSft(out, rows, spill, 40); // room for one line ahead of its turn
    sft.start();
    await sft.settle(4, { linear: line(4), segments: null }); // no info.json in the output: contributes nothing
    await sft.settle(1, { linear: null, segments: Buffer.concat([line(10), line(11)]) });
    await sft.settle(3, { linear: line(3), segments: null }); // a failed row: nothing
    expect(readdirSync(spill).length).toBeGreaterThan(0);
    await sft.settle(2, undefined); // read from its files at its turn
    // Nothing before row 0: the temp file holds no line yet, the run's file does not exist.
    expect(existsSync(join(out, 'sft.jsonl'))).toBe(false);
    await sft.settle(0, { linear: line(0), segments: null });
    expect(await sft.commit()).toEqual({ included: 2, segmented: 1 });
    await sft.abandon();

    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8')).toBe(`${line(0).toString()}{"sample":2,"from":"files"}\n`);
    expect(readFileSync(join(out, 'sft_segments.jsonl'), 'utf8')).toBe(Buffer.concat([line(10), line(11)]).toString());
    expect(existsSync(spill)).toBe(false);
    expect(readdirSync(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('never started (nothing written): the run files stay as they were, no temp or spill file is left', async () => {
    const { out, rows } = outputTree('untouched');
    writeFileSync(join(out, 'sft.jsonl'), 'earlier\n');
    const sft = new OrderedRunSft(out, rows, join(out, '.spill'), 0);
    for (const i of [4, 3, 2, 1, 0]) await sft.settle(i, undefined);
    await sft.abandon();
    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8')).toBe('earlier\n');
    expect(readdirSync(out).sort()).toEqual(['samples', 'sft.jsonl']);
  });

  it('a row that never settles is commit\'s error, not a short file', async () => {
    const { out, rows } = outputTree('short');
    const sft = new OrderedRunSft(out, rows, join(out, '.spill'));
    sft.start();
    for (const i of [0, 1, 3, 4]) await sft.settle(i, null);
    await expect(sft.commit()).rejects.toThrow(/1 of 5 rows never settled \(row 2 first\)/);
    await sft.abandon();
    expect(existsSync(join(out, 'sft.jsonl'))).toBe(false);
  });
});
