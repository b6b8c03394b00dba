/**
 * `roller export --format hf|parquet` and the sinks behind them (hf-dataset, parquet-tables) on runs the real Claude
 * Code and Codex made here: the dataset's rows read back by two readers that are not its writer's code path — DuckDB
 * and hyparquet — equal the run's sft.jsonl and sft_segments.jsonl line for line, in order; the tables equal
 * `roller query`'s views; shards are bounded; the card says what the Hub reads; bad outputs and damaged runs are
 * refused leaving nothing behind.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { openRunQuery } from '../../src/pipelines/query/query.js';
import type { RunInfo } from '../../src/schemas/index.js';
import { PARQUET_TABLES, sftRecordOfRow } from '../../src/sinks/index.js';
import { collectRuns, readJson, readJsonl, roller } from '../support/collect-run.js';
import { repoRoot } from '../support/paths.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;

const NOTES = { 'notes.txt': 'The secret word is BLUEBIRD.\nSecond line of notes.\n' };
const demoTasks = () => readFileSync(join(repoRoot, 'examples/tasks/demo.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);

/** The Parquet files of a directory, in name order (the shards' order). */
const parquetFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.parquet')).sort().map((n) => join(dir, n)) : []);

/** bigint (INT64) as a number: every count here is far below 2^53. */
const plain = (v: unknown): any => (typeof v === 'bigint' ? Number(v) : Array.isArray(v) ? v.map(plain) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v);

async function withHyparquet(dir: string): Promise<Json[]> {
  const rows: Json[] = [];
  for (const f of parquetFiles(dir)) {
    const b = readFileSync(f);
    rows.push(...((await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer })) as Json[]).map(plain));
  }
  return rows;
}

async function duckdb<T>(fn: (sql: (q: string) => Promise<Json[]>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    return await fn(async (q) => (await db.runAndReadAll(q)).getRowObjectsJS().map(plain) as Json[]);
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

/** A directory's shards as DuckDB reads them together: files in name order, rows in file order. */
const inOrder = (dir: string) => `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet('${dir}/*.parquet', filename = true, file_row_number = true) ORDER BY filename, file_row_number`;

const sftLines = (path: string) => (existsSync(path) ? readJsonl(path) : []);

describe('roller export --format hf | parquet', () => {
  const tmp = useTempDir('export-data');
  const { collectValidRun } = collectRuns(tmp);
  const provider = useScriptedProvider(tmp);
  const runs = { demo: '', multi: '', codex: '', compact: '' };

  beforeAll(async () => {
    [runs.demo, runs.codex] = await Promise.all([
      collectValidRun('demo', demoTasks(), ['--harness', 'claude-code', '--model', 'scripted/default']),
      collectValidRun('codex', [{ id: 'fork', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', files: NOTES }, ...demoTasks().slice(0, 2)], ['--harness', 'codex']),
    ]);
    runs.multi = await collectValidRun('multi', [
      { id: 'parallel', prompt: '[MAIN:parallel] Use two sub-agents at once to read notes.txt.', files: NOTES },
      { id: 'background', prompt: '[MAIN:background] Use a background sub-agent to read notes.txt.', files: NOTES },
      { id: 'hello', prompt: '[HELLO] Say hello.' },
    ], ['--harness', 'claude-code', '--model', 'scripted/default', '--concurrency', '2']);
    // A real compaction (Claude Code, its window made small): SFT segments, each with where its targets start.
    const models = join(tmp.path, 'compact-models.json');
    writeFileSync(models, JSON.stringify({ models: { 'scripted/default': { context_window: 100000, auto_compact_percent: 12 } } }));
    runs.compact = await collectValidRun('compact', [{ id: 'compact', prompt: '[COMPACT] Check notes.txt in several steps.', files: NOTES }, { id: 'hello', prompt: '[HELLO] Say hello.' }], ['--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models]);
  }, 10 * 60_000);

  const exportTo = async (run: string, format: string, out: string, extra: string[] = []) => {
    const r = await roller(['export', run, '--format', format, '--output', out, ...extra]);
    expect(r.code, r.stderr).toBe(0);
    return out;
  };

  it('hf: DuckDB and hyparquet read back the rows of sft.jsonl, in order, each with its sample as provenance (Claude Code and Codex)', async () => {
    for (const name of ['demo', 'multi', 'codex'] as const) {
      const run = runs[name];
      const out = await exportTo(run, 'hf', join(tmp.path, `hf-${name}`));
      const expected = sftLines(join(run, 'sft.jsonl'));
      expect(expected.length, name).toBeGreaterThan(0);
      const viaDuckdb = await duckdb((sql) => sql(inOrder(join(out, 'data'))));
      const viaHyparquet = await withHyparquet(join(out, 'data'));
      for (const rows of [viaDuckdb, viaHyparquet]) {
        expect(rows.map((r) => sftRecordOfRow(r as never)), name).toEqual(expected);
        // Provenance: the sample each row came from, in request order, with its tokens from its info.json.
        const info = readJson<RunInfo>(join(run, 'info.json'));
        const included = info.samples.filter((s) => readJson<Json>(join(run, s.path, 'info.json')).runtime.sft_eligibility?.eligible && (s.status === 'ok' || s.status === 'skipped'));
        expect(rows.map((r) => r.provenance.sample)).toEqual(included.map((s) => s.path));
        for (const [i, row] of rows.entries()) {
          const s = readJson<Json>(join(run, included[i]!.path, 'info.json'));
          expect(row.provenance).toMatchObject({ run: name, index: s.index, task_id: s.task_id, model: s.model, harness: s.harness.name, harness_version: s.harness.version, status: s.status, segment: null, input: s.usage.input, cache_read: s.usage.cached_input, output: s.usage.output, requests: s.usage.requests });
        }
      }
      // Codex keeps its native Responses tool definitions: the tools column holds them as written.
      if (name === 'codex') expect(JSON.parse(viaDuckdb[0]!.tools as string)).toEqual(expected[0]!.tools);
    }
  });

  it('hf: the dataset card declares what the Hub reads — configs naming the files, features equal to the Parquet columns, row counts', async () => {
    const out = join(tmp.path, 'hf-multi');
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    const front = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(card)![1]!) as Json;
    // The run's delegation gives a sub-agent record: the subagents config beside default (sft_subagents.jsonl).
    expect(front.configs).toEqual([
      { config_name: 'default', data_files: [{ split: 'train', path: 'data/train-*' }] },
      { config_name: 'subagents', data_files: [{ split: 'train', path: 'subagents/train-*' }] },
    ]);
    expect(front.dataset_info[1]).toMatchObject({ config_name: 'subagents', splits: [{ name: 'train', num_examples: sftLines(join(runs.multi, 'sft_subagents.jsonl')).length }] });
    const info = front.dataset_info[0] as Json;
    // name, num_bytes and num_examples: `datasets` ignores a split without all three (tests/e2e/python-readers.test.ts).
    expect(info.splits).toEqual([{ name: 'train', num_bytes: expect.any(Number), num_examples: sftLines(join(runs.multi, 'sft.jsonl')).length }]);
    expect(info.dataset_size).toBe(info.splits[0].num_bytes);
    const described = await duckdb((sql) => sql(`DESCRIBE SELECT * FROM read_parquet('${out}/data/*.parquet')`));
    expect((info.features as Json[]).map((f) => f.name)).toEqual(described.map((c) => c.column_name));
    const messages = (info.features as Json[]).find((f) => f.name === 'messages')!;
    expect(messages.list.map((f: Json) => f.name)).toEqual(['role', 'content', 'reasoning_content', 'tool_calls', 'tool_call_id']);
    expect((info.features as Json[]).find((f) => f.name === 'images')).toEqual({ name: 'images', sequence: 'string' });
    expect(card).toContain('claude-code');
    expect(card).toContain('from the run `multi`');
  });

  it("hf: a compacted sample's segments are the segments config, equal to sft_segments.jsonl with target_start_index; its linear record is not in default", async () => {
    const run = runs.compact;
    const out = await exportTo(run, 'hf', join(tmp.path, 'hf-compact'));
    const segments = sftLines(join(run, 'sft_segments.jsonl'));
    expect(segments.length).toBeGreaterThan(1);
    for (const rows of [await duckdb((sql) => sql(inOrder(join(out, 'segments')))), await withHyparquet(join(out, 'segments'))]) {
      expect(rows.map((r) => sftRecordOfRow(r as never))).toEqual(segments);
      expect(rows.map((r) => r.provenance.segment)).toEqual(segments.map((_, i) => i + 1));
      expect(rows.every((r) => r.provenance.task_id === 'compact')).toBe(true);
    }
    expect((await withHyparquet(join(out, 'data'))).map((r) => sftRecordOfRow(r as never))).toEqual(sftLines(join(run, 'sft.jsonl')));
    const front = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(out, 'README.md'), 'utf8'))![1]!) as Json;
    expect(front.configs.map((c: Json) => c.config_name)).toEqual(['default', 'segments']);
    expect(front.dataset_info[1].features.at(-2)).toEqual({ name: 'target_start_index', dtype: 'int64' });
  });

  it('hf: --max-shard-bytes bounds each shard; the shards, named -of-N, hold the same rows in order', async () => {
    const out = await exportTo(runs.multi, 'hf', join(tmp.path, 'hf-shards'), ['--max-shard-bytes', '20000']);
    const files = parquetFiles(join(out, 'data')).map((f) => f.split('/').at(-1));
    const n = files.length;
    expect(n).toBeGreaterThan(1);
    expect(files).toEqual(Array.from({ length: n }, (_, i) => `train-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.parquet`));
    expect((await withHyparquet(join(out, 'data'))).map((r) => sftRecordOfRow(r as never))).toEqual(sftLines(join(runs.multi, 'sft.jsonl')));
    expect(readdirSync(out).sort()).toEqual(['README.md', 'data', 'subagents']);
  });

  it("parquet: each table equals roller query's view of the same name over the run, row for row", async () => {
    for (const run of [runs.demo, runs.multi]) {
      const out = await exportTo(run, 'parquet', join(tmp.path, `tables-${run.split('/').at(-1)}`));
      expect(readdirSync(out).sort()).toEqual([...PARQUET_TABLES].sort());
      const q = await openRunQuery([run]);
      try {
        for (const table of PARQUET_TABLES) {
          const view = (await q.db.runAndReadAll(`SELECT * FROM ${table} ORDER BY ALL`)).getRowObjectsJS().map(plain) as Json[];
          const file = await duckdb((sql) => sql(`SELECT * FROM read_parquet('${out}/${table}/*.parquet') ORDER BY ALL`));
          expect(Object.keys(file[0] ?? {}), table).toEqual(Object.keys(view[0] ?? {}));
          // JSON columns of the view (scores) are JSON text in the file.
          expect(file.map((r) => JSON.stringify(r)), table).toEqual(view.map((r) => JSON.stringify(r)));
          expect(view.length, table).toBeGreaterThan(0);
        }
      } finally {
        q.close();
      }
    }
  });

  it("roller query over Parquet exports answers the docs' examples as over the runs themselves", async () => {
    const examples = [...readFileSync(join(repoRoot, 'docs/commands/query.md'), 'utf8').matchAll(/<!-- example: ([a-z-]+) -->\n```sql\n([\s\S]*?)```/g)].map((m) => m[2]!.trim()).filter((q) => !/\b(steps|runs)\b/.test(q));
    expect(examples.length).toBeGreaterThanOrEqual(4);
    const runsGiven = [runs.demo, runs.multi];
    const exported = runsGiven.map((r) => join(tmp.path, `tables-${r.split('/').at(-1)}`));
    const ask = async (dirs: string[], sql: string) => {
      const r = await roller(['query', ...dirs, sql, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    for (const sql of examples) expect(await ask(exported, sql), sql).toBe(await ask(runsGiven, sql));
    const mixed = await roller(['query', runs.demo, exported[0]!, 'SELECT 1']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('not both at once');
  });

  it('--sink hf-dataset in collect writes the dataset of the run it collects (the same sink as export)', async () => {
    const dataset = join(tmp.path, 'collected-hf');
    const tasks = join(tmp.path, 'sink-tasks.jsonl');
    writeFileSync(tasks, demoTasks().filter((t) => t.id === 'write-file').map((t) => JSON.stringify(t)).join('\n'));
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--output', join(tmp.path, 'runs'), '--run-name', 'sinked', '--sink', 'hf-dataset', '--sink-option', `hf-dataset.output=${dataset}`]);
    expect(r.code, r.stderr).toBe(0);
    expect((await withHyparquet(join(dataset, 'data'))).map((x) => sftRecordOfRow(x as never))).toEqual(sftLines(join(tmp.path, 'runs', 'sinked', 'sft.jsonl')));
  });

  it("costs on an API model: each Claude Code sample priced from its calls equals the cost Claude Code reported (two tables, one answer); Codex on a model the table lacks is unknown, saying why; roller usage shows both; the embedded scripted model costs nothing", async () => {
    const out = join(tmp.path, 'priced');
    const tasks = join(tmp.path, 'priced-tasks.jsonl');
    writeFileSync(tasks, demoTasks().map((t) => JSON.stringify(t)).join('\n'));
    const api = (harness: string, name: string, extra: string[] = []) =>
      roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', harness, '--model', `api/${harness}`, '--model-config', provider.models, '--output', out, '--run-name', name, ...extra], { env: provider.env });
    const [claude, codexRun] = await Promise.all([api('claude-code', 'claude'), api('codex', 'codex')]);
    expect(claude.code, claude.stderr).toBe(0);
    expect(codexRun.code, codexRun.stderr).toBe(0);
    const priced = join(out, 'claude');
    const demo = readJson<RunInfo>(join(priced, 'info.json'));
    for (const row of demo.samples) {
      const usage = readJson<Json>(join(priced, row.path, 'info.json')).usage;
      expect(usage.cost_usd, row.path).toBeGreaterThan(0);
      expect(usage.priced_cost_usd).toBeCloseTo(usage.cost_usd, 9);
      expect(usage).toMatchObject({ cost_source: 'reported', price_table: expect.stringMatching(/^genai-prices@/) });
    }
    expect(demo.usage.priced_cost_usd).toBeCloseTo(demo.usage.cost_usd!, 9);
    const delegate = readJson<Json>(join(priced, demo.samples.find((s) => s.task_id === 'delegate')!.path, 'info.json'));
    const [root, child] = delegate.runtime.participants as [Json, Json];
    expect(child.cost_source).toMatch(/^priced\(genai-prices@/); // Claude Code reports one total, at the root
    expect(root.priced_cost_usd + child.priced_cost_usd).toBeCloseTo(delegate.usage.priced_cost_usd, 9);
    const text = (await roller(['usage', priced])).stdout;
    expect(text).toMatch(/\$\d+\.\d{4} reported · \$\d+\.\d{4} priced \(genai-prices@/);

    const codex = readJson<RunInfo>(join(out, 'codex', 'info.json'));
    const usage = readJson<Json>(join(out, 'codex', codex.samples[0]!.path, 'info.json')).usage;
    expect(usage).toMatchObject({ cost_usd: null, priced_cost_usd: null, cost_source: 'unknown', priced_cost_note: expect.stringContaining('is not in genai-prices@') });
    // The embedded scripted model is no real model: nothing is priced, whatever model name the harness priced it as.
    for (const row of readJson<RunInfo>(join(runs.demo, 'info.json')).samples) {
      expect(readJson<Json>(join(runs.demo, row.path, 'info.json')).usage).toMatchObject({ cost_usd: 0, priced_cost_usd: 0, cost_source: 'scripted' });
    }
  }, 5 * 60_000);

  it('refused, nothing written: an output that is not empty, a format not known, a damaged sample (named)', async () => {
    const busy = join(tmp.path, 'busy');
    cpSync(join(tmp.path, 'hf-demo'), busy, { recursive: true });
    const before = readdirSync(busy).sort();
    const again = await roller(['export', runs.demo, '--format', 'hf', '--output', busy]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`${busy} is not empty`);
    expect(readdirSync(busy).sort()).toEqual(before);

    const unknown = await roller(['export', runs.demo, '--format', 'arrow', '--output', join(tmp.path, 'never')]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('--format arrow: expected atif, hf, parquet, rl or otlp');

    const damaged = join(tmp.path, 'runs', 'damaged');
    cpSync(runs.multi, damaged, { recursive: true });
    const row = readJson<RunInfo>(join(damaged, 'info.json')).samples[1]!;
    const path = join(damaged, row.path, 'info.json');
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 200));
    for (const format of ['hf', 'parquet']) {
      const out = join(tmp.path, `damaged-${format}`);
      const r = await roller(['export', damaged, '--format', format, '--output', out]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(path);
      expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(tmp.path).filter((n) => n.startsWith(`damaged-${format}.building`))).toEqual([]);
    }

    // The run's own info.json: its rows are streamed, each checked as it is reached; a bad row or a cut file is named.
    const badRow = join(tmp.path, 'runs', 'bad-row');
    cpSync(runs.multi, badRow, { recursive: true });
    const runInfo = readJson<RunInfo>(join(badRow, 'info.json'));
    (runInfo.samples[2] as Record<string, unknown>).index = 'two';
    writeFileSync(join(badRow, 'info.json'), JSON.stringify(runInfo, null, 2));
    const rowRefused = await roller(['export', badRow, '--format', 'hf', '--output', join(tmp.path, 'bad-row-hf')]);
    expect(rowRefused.code).toBe(2);
    expect(rowRefused.stderr).toContain(`${join(badRow, 'info.json')} is not a valid run info.json ($.samples[2].index: `);
    expect(existsSync(join(tmp.path, 'bad-row-hf'))).toBe(false);
    writeFileSync(join(badRow, 'info.json'), JSON.stringify(runInfo).slice(0, 900));
    const cut = await roller(['export', badRow, '--format', 'parquet', '--output', join(tmp.path, 'cut-parquet')]);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toContain(`${join(badRow, 'info.json')}: `);
    expect(cut.stderr).not.toMatch(/\n\s+at /);
  });
});
