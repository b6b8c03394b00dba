/**
 * Sinks of a user's own, through the real pipelines on the real Claude Code CLI (scripted model): the SQLite example
 * (examples/sinks/sqlite-sink.ts) through `roller collect --sink` and `roller reprocess --sink`; a sink module that
 * throws, which must leave every built-in output intact; the library's `sinks` option; and the example that re-derives
 * a published capture's relations from its files with the exported correlators.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { rederiveRelations } from '../../examples/rederive-relations.js';
import { collect, type Call, type FinishedSample, type RunInfo, type Sink } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import { roller } from '../support/roller-cli.js';

const tmp = useTempDir('sinks');
const demo = join(repoRoot, 'examples', 'tasks', 'demo.jsonl');
const sqliteSink = join(repoRoot, 'dist', 'examples', 'sinks', 'sqlite-sink.js');


/** Every call every sample's final capture published, and every participant of the run's samples. */
function published(run: string): { calls: string[]; participants: string[] } {
  const info = JSON.parse(readFileSync(join(run, 'info.json'), 'utf8')) as RunInfo;
  const calls: string[] = [];
  const participants: string[] = [];
  for (const row of info.samples) {
    const dir = join(run, row.path);
    const sample = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) as { runtime: { capture: { path: string }; participants: { participant: string }[] } };
    for (const line of readFileSync(join(dir, sample.runtime.capture.path, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean)) calls.push((JSON.parse(line) as Call).call_id);
    participants.push(...sample.runtime.participants.map((p) => p.participant));
  }
  return { calls: calls.sort(), participants: participants.sort() };
}

function database(path: string): { calls: string[]; participants: string[]; samples: number } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      calls: (db.prepare('SELECT call_id FROM calls ORDER BY call_id').all() as { call_id: string }[]).map((r) => r.call_id),
      participants: (db.prepare('SELECT participant FROM participants ORDER BY participant').all() as { participant: string }[]).map((r) => r.participant),
      samples: (db.prepare('SELECT count(*) AS n FROM samples').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

describe('user sinks through the real pipelines (real Claude Code)', () => {
  // tmp.path is set in its own beforeAll: read it when the tests run, never at collection time.
  let out = '';
  let run = '';
  beforeAll(async () => {
    out = join(tmp.path, 'runs');
    run = join(out, 'sqlite');
    const r = await roller('collect', '--capture-calls', '--tasks', demo, '--output', out, '--run-name', 'sqlite', '--capture-debug', 'full', '--sink', sqliteSink, '--sink-option', `sqlite-sink.path=${join(tmp.path, 'collect.db')}`);
    expect(r.code, r.stderr).toBe(0);
  }, 10 * 60_000);

  it('roller collect --sink: the SQLite example holds every attributed call and every participant of the run', () => {
    const want = published(run);
    expect(want.calls.length).toBeGreaterThanOrEqual(5);
    expect(want.participants.some((p) => p.startsWith('agent:'))).toBe(true); // the delegate task's sub-agent
    expect(database(join(tmp.path, 'collect.db'))).toEqual({ ...want, samples: 3 });
  });

  it('roller reprocess --sink: the same, from the archive', async () => {
    const r = await roller('reprocess', run, '--output', join(tmp.path, 'reprocessed'), '--sink', sqliteSink, '--sink-option', `sqlite-sink.path=${join(tmp.path, 'reprocess.db')}`);
    expect(r.code, r.stderr).toBe(0);
    expect(database(join(tmp.path, 'reprocess.db'))).toEqual({ ...published(run), samples: 3 });
  });

  it("a sink file outside any project (no agent-roller installed beside it) imports 'agent-roller' and gets the roller that runs it", async () => {
    const dir = join(tmp.path, 'elsewhere');
    mkdirSync(dir);
    writeFileSync(join(dir, 'count-sink.mjs'), [
      "import { defineSink, sinkFrom, z } from 'agent-roller';",
      "import { writeFileSync } from 'node:fs';",
      "const Options = z.strictObject({ path: z.string() });",
      "export default defineSink({ name: 'count-sink', options: Options, create({ path }) {",
      "  return { samples: sinkFrom('count-sink', async (items) => { let n = 0; for await (const _ of items) n++; writeFileSync(path, String(n)); }) };",
      "} });",
    ].join('\n'));
    const counted = join(dir, 'count.txt');
    const r = await roller('reprocess', run, '--output', join(tmp.path, 'reprocessed-elsewhere'), '--sink', join(dir, 'count-sink.mjs'), '--sink-option', `count-sink.path=${counted}`);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(counted, 'utf8')).toBe('3');
  });

  it('a sink module that throws is reported with its name and the sample; every built-in output is intact', async () => {
    const module = join(tmp.path, 'throwing-sink.mjs');
    writeFileSync(
      module,
      `export default { create: () => ({ samples: { name: 'throwing-sink', async consume(input) { let n = 0; for await (const s of input) if (++n === 2) throw new Error('disk of the user is full'); return { name: 'throwing-sink', received: n, written: n }; } } }) };\n`,
    );
    const r = await roller('collect', '--capture-calls', '--tasks', demo, '--output', out, '--run-name', 'throwing', '--sink', module);
    expect(r.code).toBe(1);
    const second = join(out, 'throwing', 'samples', 'scripted_default', '0001_write-file');
    expect(r.stderr).toContain(`roller collect: sink throwing-sink failed at ${second}: disk of the user is full; the run's own files are complete`);
    expect((await roller('validate-run', join(out, 'throwing'))).code).toBe(0);
    const info = JSON.parse(readFileSync(join(out, 'throwing', 'info.json'), 'utf8')) as RunInfo;
    expect(info.summary).toMatchObject({ ok: 3, failed: 0, sft_included: 3 });
    expect(readFileSync(join(out, 'throwing', 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(info.errors).toEqual([{ code: 'ROLLER_SINK_WRITE_FAILED', message: expect.stringContaining('sink throwing-sink failed'), at: expect.any(String) }]);
  }, 10 * 60_000);

  it('a sink module that never finishes, or stops taking samples, is reported past --sink-timeout; the run ends finished, its lock released', async () => {
    // Hangs at the end: takes every sample, then its consume never settles (no timer, no socket: nothing keeps node up).
    const hanging = join(tmp.path, 'hanging-sink.mjs');
    writeFileSync(hanging, `export default { create: () => ({ samples: { name: 'hanging-sink', async consume(input) { for await (const s of input); await new Promise(() => {}); } } }) };\n`);
    // Crawls: takes one sample, then waits far longer than the deadline for the next.
    const crawling = join(tmp.path, 'crawling-sink.mjs');
    writeFileSync(crawling, `export default { create: () => ({ samples: { name: 'crawling-sink', async consume(input) { for await (const s of input) await new Promise((r) => setTimeout(r, 60_000)); return { name: 'crawling-sink', received: 0, written: 0 }; } } }) };\n`);
    for (const [name, module, says] of [
      ['hanging', hanging, "sink hanging-sink failed at "],
      ['crawling', crawling, 'sink crawling-sink failed at '],
    ] as const) {
      // The crawling sink would hold the run a minute a sample, and its timers the process after: neither happens.
      const r = await roller('collect', '--capture-calls', '--tasks', demo, '--output', out, '--run-name', name, '--sink', module, '--sink-timeout', '3');
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`roller collect: ${says}`);
      expect(r.stderr).toMatch(name === 'hanging' ? /did not finish within 3 s of the run's end \(--sink-timeout\)/ : /took no item for 3 s while samples waited \(--sink-timeout\); the run went on without it/);
      expect(r.stderr).toMatch(/roller collect: finished: 3 ok/);
      const info = JSON.parse(readFileSync(join(out, name, 'info.json'), 'utf8')) as RunInfo;
      expect(info.state).toBe('finished');
      expect(info.errors).toEqual([{ code: 'ROLLER_SINK_WRITE_FAILED', message: expect.stringContaining('--sink-timeout'), at: expect.any(String) }]);
      expect(readdirSync(join(out, name))).not.toContain('.roller.lock');
      expect((await roller('validate-run', join(out, name))).code).toBe(0);
    }
  }, 10 * 60_000);

  it("the library: collect() with a sinks option takes Sink objects (a user's in-memory sinks)", async () => {
    const calls: string[] = [];
    const samples: number[] = [];
    const callSink: Sink<Call> = {
      name: 'memory-calls',
      async consume(input) {
        for await (const c of input) calls.push(c.call_id);
        return { name: 'memory-calls', received: calls.length, written: calls.length };
      },
    };
    const sampleSink: Sink<FinishedSample> = {
      name: 'memory-samples',
      async consume(input) {
        for await (const s of input) samples.push(s.index);
        return { name: 'memory-samples', received: samples.length, written: samples.length };
      },
    };
    const { runDir } = await collect({ tasks: demo, harness: 'claude-code', models: ['scripted/default'], output: out, runName: 'library', captureCalls: true, sinks: [{ calls: callSink, samples: sampleSink }] });
    expect(samples).toEqual([0, 1, 2]); // request order
    expect(calls.sort()).toEqual(published(runDir).calls);
  }, 10 * 60_000);

  it("examples/rederive-relations.ts: a published capture's relations, derived again from its files alone, are the ones it published", async () => {
    const captures = readdirSync(join(run, 'samples', 'scripted_default')).map((s) => join(run, 'samples', 'scripted_default', s, 'capture', 'attempt-0001'));
    let relations = 0;
    for (const dir of captures) {
      const { derived, published: pub } = await rederiveRelations(dir);
      expect(derived).toEqual(pub);
      relations += pub.length;
    }
    expect(relations).toBeGreaterThan(0); // the delegate task's spawn, completion, delivery, in-context
  });
});
