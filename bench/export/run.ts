/**
 * Exports of a big run (issue 53): a synthetic run of N samples (the README demo's three real Claude Code samples
 * copied round-robin, big files hard-linked) exported by the CLI as a Hugging Face dataset (Parquet), as Parquet tables
 * and as OTLP traces (to a receiver here that reads and discards each request) — each against the limit: reading and
 * JSON.parse-ing the same SFT files (hf) or calls.jsonl files (otlp) in one process. Peak RSS of each export process
 * (/usr/bin/time), at two run sizes: flat means it does not grow with the run. Then `roller query` of tokens by
 * participant over the Parquet export. Targets: peak RSS <= 300 MB at every size, the query <= 5 s.
 *
 *   npm run bench:export                         # 20,000 and 100,000 samples
 *   npm run bench:export -- --sizes 2000,10000
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { RunInfo, SampleInfo } from '../../src/schemas/run-info.js';
import { demoRun, replicateRun, repoRoot } from '../support/synthetic-run.js';

const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const sizes = arg('--sizes', '20000,100000').split(',').map(Number);
const work = mkdtempSync(join(tmpdir(), 'roller-bench-export-'));

/** The CLI under /usr/bin/time (not blocking this process: the collector answers from here): wall time and peak RSS. */
async function timed(args: string[]): Promise<{ s: number; rssMb: number; stderr: string }> {
  const t = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'ROLLER_MAXRSS_KB %M', join(repoRoot, 'bin', 'roller'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number];
  const s = (performance.now() - t) / 1000;
  if (code !== 0) throw new Error(`roller ${args.join(' ')}: ${stderr}`);
  const kb = Number(/ROLLER_MAXRSS_KB (\d+)/.exec(stderr)![1]);
  return { s, rssMb: kb / 1024, stderr };
}

async function main(): Promise<void> {
  const demo = await demoRun(work);
  // A collector that takes everything: each request read whole and answered with an empty success.
  let received = 0;
  const collector = createServer((req, res) => {
    req.on('data', (c: Buffer) => (received += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  const verdicts: string[] = [];
  const rss: number[] = [];
  for (const n of sizes) {
    const big = join(work, `big-${n}`);
    let t = performance.now();
    replicateRun(demo, big, n);
    console.log(`${n} samples: built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const info = JSON.parse(readFileSync(join(big, 'info.json'), 'utf8')) as RunInfo;

    // The limits: the same files read and parsed in one process.
    t = performance.now();
    let sftBytes = 0;
    let callBytes = 0;
    for (const row of info.samples) {
      const s = JSON.parse(readFileSync(join(big, row.path, 'info.json'), 'utf8')) as SampleInfo;
      const text = readFileSync(join(big, row.path, s.trajectory.sft!));
      sftBytes += text.length;
      JSON.parse(text.toString('utf8'));
    }
    const parseSft = (performance.now() - t) / 1000;
    t = performance.now();
    for (const row of info.samples) {
      const s = JSON.parse(readFileSync(join(big, row.path, 'info.json'), 'utf8')) as SampleInfo;
      const text = readFileSync(join(big, row.path, s.runtime.capture!.path, 'calls.jsonl'), 'utf8');
      callBytes += text.length;
      for (const l of text.split('\n')) if (l) JSON.parse(l);
    }
    const parseCalls = (performance.now() - t) / 1000;

    const hf = await timed(['export', big, '--format', 'hf', '--output', join(work, `hf-${n}`)]);
    const shards = readFileSync(join(work, `hf-${n}`, 'README.md'), 'utf8').match(/num_examples: (\d+)/)![1];
    const tables = await timed(['export', big, '--format', 'parquet', '--output', join(work, `tables-${n}`)]);
    received = 0;
    const otlp = await timed(['export', big, '--format', 'otlp', '--endpoint', endpoint]);
    const query = await timed(['query', join(work, `tables-${n}`), 'SELECT role, count(*) AS agents, sum(input) AS input, sum(cache_read) AS cache_read, sum(output) AS output FROM participants GROUP BY role ORDER BY role', '--format', 'json']);
    const mb = (b: number) => (b / (1 << 20)).toFixed(0);
    console.log(`  SFT: ${mb(sftBytes)} MB in ${n} trace_SFT.json; calls: ${mb(callBytes)} MB in ${n} calls.jsonl`);
    console.log(`  hf       ${hf.s.toFixed(1)} s (${(sftBytes / (1 << 20) / hf.s).toFixed(0)} MB/s) vs JSON.parse of the SFT files ${parseSft.toFixed(1)} s: ratio ${(parseSft / hf.s).toFixed(2)}; peak RSS ${hf.rssMb.toFixed(0)} MB; ${shards} rows`);
    console.log(`  parquet  ${tables.s.toFixed(1)} s; peak RSS ${tables.rssMb.toFixed(0)} MB`);
    console.log(`  otlp     ${otlp.s.toFixed(1)} s (${mb(received)} MB of protobuf sent) vs JSON.parse of the calls files ${parseCalls.toFixed(1)} s: ratio ${(parseCalls / otlp.s).toFixed(2)}; peak RSS ${otlp.rssMb.toFixed(0)} MB`);
    console.log(`  query    tokens by participant role over the Parquet export: ${query.s.toFixed(2)} s (process start included) ${query.s <= 5 ? 'PASS' : 'MISS'} (<= 5 s)`);
    rss.push(Math.max(hf.rssMb, tables.rssMb, otlp.rssMb));
    verdicts.push(`${n}: peak RSS ${Math.max(hf.rssMb, tables.rssMb, otlp.rssMb).toFixed(0)} MB ${Math.max(hf.rssMb, tables.rssMb, otlp.rssMb) <= 300 ? 'PASS' : 'MISS'} (<= 300 MB); query ${query.s <= 5 ? 'PASS' : 'MISS'}`);
    rmSync(big, { recursive: true, force: true });
    for (const d of [`hf-${n}`, `tables-${n}`]) rmSync(join(work, d), { recursive: true, force: true });
  }
  if (rss.length > 1) verdicts.push(`peak RSS from ${sizes[0]} to ${sizes.at(-1)} samples: ${rss[0]!.toFixed(0)} -> ${rss.at(-1)!.toFixed(0)} MB (${(((rss.at(-1)! / rss[0]!) - 1) * 100).toFixed(0)}%)`);
  console.log(verdicts.join('\n'));
  collector.close();
  rmSync(work, { recursive: true, force: true });
}

await main();
