/**
 * `roller query` on a big run (issue 53): a synthetic run of N samples (the README demo's three real Claude Code
 * samples copied round-robin, big files hard-linked), two aggregates through the CLI — tokens by agent role from the
 * agent trees (N sample info.json files), and tokens and tools by model call (every calls.jsonl, request bodies
 * skipped by the view) — against the limit: reading and JSON.parse-ing the same files in this process.
 * Target: each aggregate <= 5 s.
 *
 *   npm run bench:query
 *   npm run bench:query -- --samples 30000
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunInfo, SampleInfo } from '../../src/schemas/run-info.js';
import { demoRun, replicateRun, repoRoot } from '../support/synthetic-run.js';

const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const n = Number(arg('--samples', '10000'));
const work = mkdtempSync(join(tmpdir(), 'roller-bench-query-'));

function timedQuery(run: string, sql: string): { ms: number; rows: string } {
  const t = performance.now();
  const r = spawnSync(join(repoRoot, 'bin', 'roller'), ['query', run, sql, '--format', 'json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return { ms: performance.now() - t, rows: r.stdout.trim() };
}

async function main(): Promise<void> {
  const demo = await demoRun(work);
  const big = join(work, 'big');
  replicateRun(demo, big, n);
  const info = JSON.parse(readFileSync(join(big, 'info.json'), 'utf8')) as RunInfo;

  // The limit: the same files read and parsed here, the same sums taken.
  let t = performance.now();
  let trees = 0;
  for (const row of info.samples) trees += (JSON.parse(readFileSync(join(big, row.path, 'info.json'), 'utf8')) as SampleInfo).runtime.participants!.length;
  const parseInfos = performance.now() - t;
  t = performance.now();
  let calls = 0;
  for (const row of info.samples) {
    const s = JSON.parse(readFileSync(join(big, row.path, 'info.json'), 'utf8')) as SampleInfo;
    calls += readFileSync(join(big, row.path, s.runtime.capture!.path, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown).length;
  }
  const parseCalls = performance.now() - t;

  const byRole = timedQuery(big, 'SELECT role, count(*) AS agents, sum(input) AS input, sum(cache_read) AS cache_read, sum(output) AS output FROM participants GROUP BY role ORDER BY role');
  const byCall = timedQuery(big, 'SELECT model, count(*) AS calls, sum(input) AS input, sum(output) AS output, sum(len(tools)) AS tool_calls FROM calls GROUP BY model');
  const pass = (ms: number) => (ms <= 5000 ? 'PASS' : 'MISS');
  console.log(`${n} samples, ${trees} agents, ${calls} calls`);
  console.log(`  tokens by agent role  roller query ${(byRole.ms / 1000).toFixed(2)} s (process start included)  vs JSON.parse of the info.json files ${(parseInfos / 1000).toFixed(2)} s  ${pass(byRole.ms)} (<= 5 s)\n    ${byRole.rows.split('\n').join('\n    ')}`);
  console.log(`  tokens by model call  roller query ${(byCall.ms / 1000).toFixed(2)} s  vs JSON.parse of every calls.jsonl ${(parseCalls / 1000).toFixed(2)} s  ${pass(byCall.ms)} (<= 5 s)\n    ${byCall.rows.split('\n').join('\n    ')}`);
  rmSync(work, { recursive: true, force: true });
}

await main();
