/**
 * The run's sample stream into its run-level files (sft.jsonl, sft_segments.jsonl): request order whatever order the
 * samples finish in; a row contributes only when its sample is ok or reused with eligible SFT; an aborted stream leaves
 * the run's files as they were; a user sink that throws is reported and the run's files are still complete.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InOrder } from '../../src/core/in-order.js';
import type { Sink } from '../../src/core/stage.js';
import { finishedSample, type FinishedSample } from '../../src/pipelines/finished-sample.js';
import { runSampleSinks } from '../../src/pipelines/run-samples.js';
import { openUserSinks } from '../../src/pipelines/user-sinks.js';
import type { SampleInfo } from '../../src/schemas/run-info.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('run-samples');

/** Samples 0-3 on disk: 1 is compacted (two segments), 3 failed; each linear SFT names its index. */
function sampleTree(name: string): { out: string; samples: FinishedSample[] } {
  const out = join(tmp.path, name);
  const samples = [0, 1, 2, 3].map((i) => {
    const dir = join(out, `samples/m/${i}_t`);
    mkdirSync(join(dir, 'sft_segments'), { recursive: true });
    writeFileSync(join(dir, 'trace_SFT.json'), JSON.stringify({ sample: i }, null, 2));
    for (const k of [1, 2]) writeFileSync(join(dir, `sft_segments/000${k}.json`), JSON.stringify({ sample: i, segment: k }, null, 2));
    writeFileSync(join(dir, 'trace_SFT_subagents.jsonl'), `{"sample":${i},"agent":1}\n{"sample":${i},"agent":2}\n`);
    const info = {
      index: i,
      status: i === 3 ? 'error' : 'ok',
      runtime: { sft_eligibility: { eligible: true } },
      trajectory: { sft: 'trace_SFT.json', ...(i === 1 ? { sft_segments: [{ path: 'sft_segments/0001.json' }, { path: 'sft_segments/0002.json' }] } : {}), ...(i >= 2 ? { sft_subagents: 'trace_SFT_subagents.jsonl' } : {}) },
    } as unknown as SampleInfo;
    return finishedSample(dir, info);
  });
  return { out, samples };
}

describe('the sample stream into the run-level SFT files', () => {
  it('request order whatever order samples finish in; failed samples contribute nothing; segments apart', async () => {
    const { out, samples } = sampleTree('order');
    const order = new InOrder<FinishedSample>(5);
    const done = runSampleSinks(out, order, await openUserSinks([]));
    for (const i of [3, 1, 2]) order.settle(i, samples[i]!);
    order.settle(4, null); // a sample never run
    expect(existsSync(join(out, 'sft.jsonl'))).toBe(false); // nothing replaces the run's file before the end
    order.settle(0, samples[0]!);
    expect(await done).toEqual({ included: 2, segmented: 1, withSubagents: 1, sinkFailures: [] });
    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8')).toBe('{"sample":0}\n{"sample":2}\n');
    // Sub-agent records of ok samples only (sample 3 failed), as the sample wrote them.
    expect(readFileSync(join(out, 'sft_subagents.jsonl'), 'utf8')).toBe('{"sample":2,"agent":1}\n{"sample":2,"agent":2}\n');
    expect(readFileSync(join(out, 'sft_segments.jsonl'), 'utf8')).toBe('{"sample":1,"segment":1}\n{"sample":1,"segment":2}\n');
    expect(readdirSync(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('aborted: the run files stay as they were, and no temporary file is left', async () => {
    const { out, samples } = sampleTree('untouched');
    writeFileSync(join(out, 'sft.jsonl'), 'earlier\n');
    const order = new InOrder<FinishedSample>(4);
    const controller = new AbortController();
    const done = runSampleSinks(out, order, await openUserSinks([]), controller.signal);
    order.settle(0, samples[0]!);
    controller.abort(new Error('nothing reprocessed'));
    await expect(done).rejects.toThrow('nothing reprocessed');
    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8')).toBe('earlier\n');
    expect(readdirSync(out).sort()).toEqual(['samples', 'sft.jsonl']);
  });

  it("a user sink that throws is reported with its name and the sample; the run's files are complete", async () => {
    const { out, samples } = sampleTree('failing-user');
    const seen: number[] = [];
    const failing: Sink<FinishedSample> = {
      name: 'flaky-db',
      async consume(input) {
        for await (const s of input) {
          seen.push(s.index);
          if (s.index === 1) throw new Error('database is locked');
        }
        return { name: 'flaky-db', received: seen.length, written: seen.length };
      },
    };
    const order = new InOrder<FinishedSample>(4);
    const done = runSampleSinks(out, order, await openUserSinks([], [{ samples: failing }]));
    for (const i of [0, 1, 2, 3]) order.settle(i, samples[i]!);
    const outcome = await done;
    expect(outcome.sinkFailures).toEqual([{ sink: 'flaky-db', at: samples[1]!.dir, message: 'database is locked' }]);
    expect(seen).toEqual([0, 1]);
    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8')).toBe('{"sample":0}\n{"sample":2}\n');
  });
});
