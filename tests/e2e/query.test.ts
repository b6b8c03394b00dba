/**
 * `roller query` (DuckDB over a run's files) on runs the real Claude Code made here: the README demo and a run with
 * parallel and background sub-agents, queried together. Every example query of docs/commands/query.md is read from
 * the page and run through the CLI, and its rows compared with answers computed here from the same files.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunInfo } from '../../src/schemas/index.js';
import { collectRuns, readJson, roller } from '../support/collect-run.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;

const NOTES = { 'notes.txt': 'The secret word is BLUEBIRD.\nSecond line of notes.\n' };
const EXAMPLES = Object.fromEntries([...readFileSync(join(repoRoot, 'docs/commands/query.md'), 'utf8').matchAll(/<!-- example: ([a-z-]+) -->\n```sql\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!.trim()]));

async function query(runs: string[], sql: string): Promise<Json[]> {
  const r = await roller(['query', ...runs, sql, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() ? r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json) : [];
}

/** What the files say, for the answers: each sample's info.json, calls and relations, by run name. */
function filesOf(run: string) {
  const info = readJson<RunInfo>(join(run, 'info.json'));
  return info.samples.map((row) => {
    const s = readJson<Json>(join(run, row.path, 'info.json'));
    const capture = s.runtime.capture ? join(run, row.path, s.runtime.capture.path) : null;
    const lines = (f: string) => (capture ? readFileSync(join(capture, f), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json) : []);
    return { run: info.run_name, sample: row.path, info: s, calls: lines('calls.jsonl'), relations: lines('relations.jsonl'), steps: (readJson<Json>(join(run, row.path, 'trace_ACTF.json')).steps as Json[]).length };
  });
}

const byKeys = (...keys: string[]) => (a: Json, b: Json) => {
  for (const k of keys) {
    const desc = k.startsWith('-');
    const key = desc ? k.slice(1) : k;
    const c = a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
    if (c !== 0) return desc ? -c : c;
  }
  return 0;
};

describe('roller query: SQL over runs, read from their files', () => {
  const tmp = useTempDir('query');
  const { collectValidRun } = collectRuns(tmp);
  let runs: string[] = [];
  let samples: ReturnType<typeof filesOf> = [];

  beforeAll(async () => {
    const demo = await collectValidRun('demo', readFileSync(join(repoRoot, 'examples/tasks/demo.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json), ['--harness', 'claude-code', '--model', 'scripted/default']);
    const multi = await collectValidRun('multi', [
      { id: 'parallel', prompt: '[MAIN:parallel] Use two sub-agents at once to read notes.txt.', files: NOTES },
      { id: 'background', prompt: '[MAIN:background] Use a background sub-agent to read notes.txt.', files: NOTES },
    ], ['--harness', 'claude-code', '--model', 'scripted/default', '--concurrency', '2']);
    // A copy whose one result_in_context relation is gone: its child's result "never entered" the parent's input.
    const cut = join(tmp.path, 'runs', 'cut');
    cpSync(demo, cut, { recursive: true });
    const cutInfo = readJson<Json>(join(cut, 'info.json'));
    writeFileSync(join(cut, 'info.json'), JSON.stringify({ ...cutInfo, run_name: 'cut' }));
    const delegate = (cutInfo.samples as Json[]).find((s) => s.task_id === 'delegate')!;
    const relPath = join(cut, delegate.path, 'capture/attempt-0001/relations.jsonl');
    writeFileSync(relPath, readFileSync(relPath, 'utf8').split('\n').filter((l) => !l.includes('"type":"result_in_context"')).join('\n'));
    runs = [demo, multi, cut];
    samples = runs.flatMap(filesOf);
  }, 5 * 60_000);

  it('the docs hold the six examples', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(['hungriest-sub-agents', 'results-never-in-context', 'slowest-first-byte', 'tokens-by-depth', 'tool-use', 'training-yield']);
  });

  it('tokens by agent depth, and the hungriest sub-agents: the numbers of every sample info.json agent tree', async () => {
    const agents: Json[] = samples.flatMap((s) => (s.info.runtime.participants as Json[]).map((p) => ({ run: s.run, sample: s.sample, ...p })));
    const groups = new Map<string, Json>();
    for (const p of agents) {
      const g = groups.get(`${p.role}|${p.depth}`) ?? { role: p.role, depth: p.depth, agents: 0, input: 0, cache_read: 0, output: 0 };
      g.agents++;
      g.input += p.tokens.input;
      g.cache_read += p.tokens.cache_read;
      g.output += p.tokens.output;
      groups.set(`${p.role}|${p.depth}`, g);
    }
    expect(await query(runs, EXAMPLES['tokens-by-depth']!)).toEqual([...groups.values()].sort(byKeys('depth', 'role')));
    const children = agents.filter((p) => p.role !== 'root').map((p) => ({ run: p.run, sample: p.sample, participant: p.participant, tokens: p.tokens.input + p.tokens.cache_creation + p.tokens.cache_read + p.tokens.output }));
    expect(children.length).toBeGreaterThanOrEqual(5); // demo's, the copy's, two parallel, one background
    expect(await query(runs, EXAMPLES['hungriest-sub-agents']!)).toEqual(children.sort(byKeys('-tokens', 'run', 'sample', 'participant')).slice(0, 10));
  });

  it("children whose result never entered the parent's input: exactly the one whose relation the copy lost", async () => {
    const expected = samples.flatMap((s) =>
      s.relations.filter((r) => r.type === 'spawn' && !s.relations.some((x) => x.type === 'result_in_context' && x.status === 'established' && x.child_participant_id === r.child_participant_id)).map((r) => ({ run: s.run, sample: s.sample, child_participant_id: r.child_participant_id, tool_call_id: r.tool_call_id })),
    );
    expect(expected.map((e) => [e.run, e.sample])).toEqual([['cut', 'samples/scripted_default/0002_delegate']]);
    expect(await query(runs, EXAMPLES['results-never-in-context']!)).toEqual(expected);
  });

  it('tool use and the slowest first bytes: from every captured call', async () => {
    const calls: Json[] = samples.flatMap((s) => s.calls.map((c) => ({ ...c, run: s.run, sample: s.sample })));
    const tools = new Map<string, number>();
    for (const c of calls) for (const t of c.tool_refs as Json[]) tools.set(t.name, (tools.get(t.name) ?? 0) + 1);
    expect(await query(runs, EXAMPLES['tool-use']!)).toEqual([...tools].map(([tool, n]) => ({ tool, calls: n })).sort(byKeys('-calls', 'tool')));
    const timed = calls.map((c) => ({ run: c.run, sample: c.sample, seq: c.seq, model: c.response_model ?? c.request_model, ttfb_ms: Date.parse(c.first_byte_at) - Date.parse(c.started_at), duration_ms: Date.parse(c.ended_at) - Date.parse(c.started_at) }));
    expect(await query(runs, EXAMPLES['slowest-first-byte']!)).toEqual(timed.sort(byKeys('-ttfb_ms', 'run', 'sample', 'seq')).slice(0, 10));
  });

  it('training yield by status and SFT eligibility; steps and calls count as the files; no request body in the calls view', async () => {
    const groups = new Map<string, Json>();
    for (const s of samples) {
      const e = s.info.runtime.sft_eligibility;
      const key = `${s.run}|${s.info.status}|${e.eligible}|${e.reason ?? ''}`;
      groups.set(key, { run: s.run, status: s.info.status, sft_eligible: e.eligible, sft_reason: e.reason ?? '', samples: (groups.get(key)?.samples ?? 0) + 1 });
    }
    expect(await query(runs, EXAMPLES['training-yield']!)).toEqual([...groups.values()].sort(byKeys('run', 'status', 'sft_eligible', 'sft_reason')));
    const counts = await query(runs, 'SELECT run, sample, (SELECT count(*) FROM steps t WHERE t.run = s.run AND t.sample = s.sample) AS steps, (SELECT count(*) FROM calls c WHERE c.run = s.run AND c.sample = s.sample) AS calls, requests FROM samples s ORDER BY run, sample');
    expect(counts).toEqual(samples.map((s) => ({ run: s.run, sample: s.sample, steps: s.steps, calls: s.calls.length, requests: s.info.usage.requests })).sort(byKeys('run', 'sample')));
    const columns = (await query([runs[0]!], "SELECT column_name FROM information_schema.columns WHERE table_name = 'calls'")).map((c) => c.column_name);
    expect(columns).toContain('tool_call_ids');
    expect(columns).not.toContain('context');
  });

  it('refuses, saying what: SQL DuckDB rejects (quoted), a directory that is no run, no SQL; csv quotes what it must', async () => {
    const bad = await roller(['query', runs[0]!, 'SELECT nope FROM samples']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('the query failed: Binder Error: Referenced column "nope" not found')]);
    const none = await roller(['query', join(tmp.path, 'nothing'), 'SELECT 1']);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('no info.json; pass run directories')]);
    expect((await roller(['query', runs[0]!])).code).toBe(2);
    const csv = await roller(['query', runs[0]!, "SELECT 'a,b' AS x, 'say \"hi\"' AS y", '--format', 'csv']);
    expect(csv.stdout).toBe('x,y\n"a,b","say ""hi"""\n');
  });

  it('only reads, and only the runs: writes, attachments, settings and files outside the runs are refused; nothing is written', async () => {
    const outside = join(tmp.path, 'outside');
    const refused = async (sql: string, said: string) => {
      const r = await roller(['query', runs[0]!, sql]);
      expect([r.code, r.stderr], sql).toEqual([2, expect.stringContaining(said)]);
    };
    await refused(`COPY (SELECT * FROM samples) TO '${outside}.csv'`, 'file system operations are disabled by configuration');
    // Inside a run DuckDB may read; it may still write nothing there.
    await refused(`COPY (SELECT * FROM samples) TO '${runs[0]}/written.csv'`, 'a COPY statement is refused');
    expect(readdirSync(runs[0]!)).not.toContain('written.csv');
    await refused(`ATTACH '${outside}.db' AS x`, 'a ATTACH statement is refused');
    await refused('CREATE TABLE t AS SELECT 1', 'a CREATE statement is refused');
    await refused('SET enable_external_access = true', 'a SET statement is refused');
    await refused('SELECT 1; SELECT 2', 'roller query runs one statement; this SQL holds 2');
    // DuckDB's file functions reach only the runs' own directories.
    await refused("SELECT * FROM read_text('/etc/hostname')", 'file system operations are disabled by configuration');
    await refused(`SELECT * FROM read_text('${runs[0]}/../../../../etc/hostname')`, 'file system operations are disabled by configuration');
    expect(await query([runs[0]!], `SELECT size > 0 AS ok FROM read_text('${runs[0]}/info.json')`)).toEqual([{ ok: true }]);
    expect(readdirSync(tmp.path).filter((n) => n.startsWith('outside'))).toEqual([]);
  });
});
