/**
 * roller's exports read back by the readers users load them with, in a venv of pinned releases
 * (tests/python/requirements.txt): the `--format hf` dataset by Hugging Face `datasets` (its card's configs and
 * features accepted, every row equal to sft.jsonl's; the `subagents` config's equal to sft_subagents.jsonl's), the `--format parquet` tables by pyarrow (a row per sample,
 * participant, call and relation). The ATIF export is held to Harbor's rules by `roller validate --schema atif`
 * (tests/e2e/export-data.test.ts): Harbor itself (0.26.0) needs Python >= 3.12, which these machines do not have.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { info, roller, sample } from '../support/collect-run.js';
import { pythonReaders, readExports } from '../support/python-readers.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('python-readers');
const demo = join(import.meta.dirname, '..', '..', 'examples', 'tasks', 'demo.jsonl');

describe('exports read by datasets and pyarrow', () => {
  let python = '';
  beforeAll(async () => {
    python = await pythonReaders();
  }, 20 * 60_000);

  it('a Hermes run with a sub-agent: the HF dataset loads with its rows equal to sft.jsonl; the Parquet tables hold every sample, participant, call and relation', async () => {
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--tasks', demo, '--harness', 'hermes', '--output', out, '--run-name', 'd', '--capture-calls']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'd');
    for (const format of ['hf', 'parquet']) expect((await roller(['export', run, '--format', format])).code).toBe(0);
    const found = await readExports(python, run, join(run, 'hf'), join(run, 'parquet'));
    const sft = readFileSync(join(run, 'sft.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    expect(found.hf).toMatchObject({ rows: sft, sft_rows: sft, equal: true, first_difference: null, warnings: [], split_info: { num_examples: sft } });
    expect(found.hf.provenance_samples).toEqual(info(run).samples.map((s) => s.path));
    expect(found.hf.features).toEqual(expect.arrayContaining(['messages', 'tools']));
    // The sub-agents' config (Hermes's delegate_task child): the records of sft_subagents.jsonl, read back equal.
    const subagentLines = readFileSync(join(run, 'sft_subagents.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    expect(subagentLines).toBeGreaterThan(0);
    expect(found.hf_subagents).toEqual({ rows: subagentLines, file_rows: subagentLines, equal: true, first_difference: null });
    // Every table's rows, as pyarrow reads them, are the run's own records: its samples, participants, calls, relations.
    const rows = info(run).samples;
    const keyed = (t: string) => (found.parquet[t].keyed as Json[]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const sorted = (xs: Json[]) => xs.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const jsonl = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    const capture = (row: (typeof rows)[number]) => join(run, row.path, 'capture', 'attempt-0001');
    expect(keyed('participants')).toEqual(
      sorted(rows.flatMap((row) => (sample(run, row).runtime.participants as Json[]).map((p) => ({ sample: row.path, participant: p.participant, role: p.role, parent: p.parent, input: p.tokens.input, cache_read: p.tokens.cache_read, output: p.tokens.output, reasoning: p.tokens.reasoning })))),
    );
    expect(keyed('calls')).toEqual(
      sorted(rows.flatMap((row) => jsonl(join(capture(row), 'calls.jsonl')).map((c) => ({ sample: row.path, call_id: c.call_id, participant_id: c.participant_id, input: c.usage.normalized?.input ?? null, cache_read: c.usage.normalized?.cached_input ?? null, output: c.usage.normalized?.output ?? null })))),
    );
    expect(keyed('relations')).toEqual(
      sorted(rows.flatMap((row) => jsonl(join(capture(row), 'relations.jsonl')).map((r) => ({ sample: row.path, relation_id: r.relation_id, type: r.type, parent_participant_id: r.parent_participant_id, child_participant_id: r.child_participant_id, tool_call_id: r.tool_call_id })))),
    );
    expect(keyed('samples').map((x) => [x.sample, x.status])).toEqual(sorted(rows.map((row) => ({ sample: row.path, status: row.status }))).map((x) => [x.sample, x.status]));
  }, 15 * 60_000);
});
