import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunTable } from '../../../src/pipelines/view/run-table.js';
import type { RunInfo } from '../../../src/schemas/run-info.js';
import { useTempDir } from '../../support/temp-dir.js';

const usage = (n: number, cost: number) => ({ input: n, cached_input: 0, cache_creation: 0, output: 1, reasoning: 0, cost_usd: cost, requests: 1 });

describe("the run table: the run's rows at once, each sample's info.json read in the background, queried a page at a time", () => {
  const tmp = useTempDir('run-table');

  it('filters, sorts (unknown values last either way) and pages; a sample whose info.json is missing says so', async () => {
    const samples = [
      { index: 0, task_id: 'alpha', model: 'm/a', status: 'ok', error: null, path: 'samples/m_a/0000_alpha', usage: usage(30, 0.3) },
      { index: 1, task_id: 'beta', model: 'm/a', status: 'error', error: { code: 'X', message: 'harness crashed' }, path: 'samples/m_a/0001_beta', usage: null },
      { index: 2, task_id: 'gamma', model: 'm/b', status: 'ok', error: null, path: 'samples/m_b/0002_gamma', usage: usage(10, 0.1), grade: 'passed' },
      { index: 3, task_id: 'delta', model: 'm/b', status: 'timeout', error: null, path: 'samples/m_b/0003_delta', usage: usage(20, 0.2) },
    ];
    for (const s of samples.slice(0, 3)) {
      mkdirSync(join(tmp.path, s.path), { recursive: true });
      writeFileSync(join(tmp.path, s.path, 'info.json'), JSON.stringify({ harness: { name: 'pi' }, elapsed_ms: 100 * (s.index + 1), grade: s.grade ? { scores: { reward: 1 } } : undefined, runtime: { sft_eligibility: { eligible: s.status === 'ok', reason: s.status === 'ok' ? null : 'failed' }, participants: [{ role: 'root' }, ...Array(s.index).fill({ role: 'child' })] } }));
    }
    const table = new RunTable(tmp.path, { samples } as unknown as RunInfo);
    const q = (patch: object) => table.query({ offset: 0, limit: 10, sort: 'index', desc: false, q: '', status: '', ...patch });
    expect(q({}).indexed).toBe(0);
    expect(q({ sort: 'duration' }).rows.map((r) => r.index)).toEqual([0, 1, 2, 3]); // nothing known yet: index order
    await table.index(2);
    expect(q({}).indexed).toBe(4);
    expect(q({ sort: 'tokens' }).rows.map((r) => r.task_id)).toEqual(['gamma', 'delta', 'alpha', 'beta']);
    expect(q({ sort: 'tokens', desc: true }).rows.map((r) => r.task_id)).toEqual(['alpha', 'delta', 'gamma', 'beta']);
    expect(q({ sort: 'subagents', desc: true }).rows.map((r) => r.subagents)).toEqual([2, 1, 0, null]);
    expect(q({ q: 'crashed' }).rows.map((r) => r.task_id)).toEqual(['beta']);
    expect(q({ q: 'M/B ok' }).rows.map((r) => r.task_id)).toEqual(['gamma']);
    expect(q({ status: 'timeout' }).rows.map((r) => [r.task_id, r.unreadable])).toEqual([['delta', 'samples/m_b/0003_delta/info.json: ENOENT']]);
    expect(q({ offset: 1, limit: 2 })).toMatchObject({ matched: 4, total: 4, rows: [{ index: 1 }, { index: 2 }] });
    expect(q({ sort: 'score' }).rows[0]).toMatchObject({ task_id: 'gamma', score: 1, grade: 'passed', harness: 'pi', sft: { eligible: true } });
  });
});

describe('trajectory pages: strings past 32 K characters are cut, saying how much more and where it is whole', () => {
  it('cuts nested strings only', async () => {
    const { clipStrings, CLIP_CHARS } = await import('../../../src/pipelines/view/view-data.js');
    const long = 'a'.repeat(CLIP_CHARS + 5);
    const clipped = clipStrings({ step_id: 3, observation: [{ content: long, isError: false }], short: 'b' }, 'trace_ACTF.json, steps[2]') as { observation: { content: string }[]; short: string; step_id: number };
    expect(clipped.observation[0]!.content).toBe(`${'a'.repeat(CLIP_CHARS)}\n… [5 more characters: the whole text is in trace_ACTF.json, steps[2]]`);
    expect([clipped.short, clipped.step_id]).toEqual(['b', 3]);
  });
});
