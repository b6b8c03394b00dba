/**
 * Engine benchmark (issue 2). One run prints, for 1 GB and 4 GB of call-like JSONL:
 * MB/s and peak RSS of (a) the parse limit, (b) the hand-written job, (c) the engine doing (b),
 * (d) the same stages through highland; then c/b, d/b, b/a and RSS at 4 GB vs 1 GB, each against its
 * limit. Every job runs in a child process of its own, so peak RSS (getrusage maxrss) is its own.
 *
 *   npm run bench:engine                     # 1 GB and 4 GB
 *   npm run bench:engine -- --sizes 0.25,1   # other sizes, in GB
 *   npm run bench:engine -- --reps 5         # best of 5 for (a), (b), (c) (default 3)
 *
 * This machine is shared and noisy (the same job varies by ±20% between runs), so (a), (b) and (c) run
 * interleaved --reps times and the best run of each counts: the least disturbed run is the one closest
 * to what the code costs. (d) and the sha256 variant run once.
 */
import { fork } from 'node:child_process';
import { mkdir, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ensureJsonl } from './generate.js';
import { jobs, type JobName } from './jobs.js';

const GB = 1e9;
const here = fileURLToPath(import.meta.url);
const dataDir = fileURLToPath(new URL('../../../bench/data/', import.meta.url));

interface Measured {
  job: JobName;
  bytes: number;
  seconds: number;
  mbps: number;
  peakRssMb: number;
  records: number;
  outputBytes: number;
}

async function child(job: JobName, input: string): Promise<void> {
  const outDir = join(dataDir, 'out', `${job}-${process.pid}`);
  await mkdir(outDir, { recursive: true });
  const { size } = await stat(input);
  const started = process.hrtime.bigint();
  const result = await jobs[job].run(input, join(outDir, 'a.jsonl'), join(outDir, 'b.jsonl'));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await rm(outDir, { recursive: true, force: true });
  const measured: Measured = {
    job,
    bytes: size,
    seconds,
    mbps: size / 1e6 / seconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    ...result,
  };
  process.send!(measured);
}

function runChild(job: JobName, input: string): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const cp = fork(here, ['--child', job, input], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: Measured | undefined;
    cp.on('message', (m) => (result = m as Measured));
    cp.on('error', reject);
    cp.on('close', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`bench job ${job} exited with ${code}`))));
  });
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const fmt = (n: number, d = 1) => n.toFixed(d);

async function main(): Promise<void> {
  const sizes = arg('--sizes', '1,4').split(',').map(Number);
  const reps = Number(arg('--reps', '3'));
  const repeated: JobName[] = ['a', 'b', 'c'];
  const once: JobName[] = ['d', 'c+sha'];
  const results = new Map<number, Map<JobName, Measured>>();

  for (const gb of sizes) {
    const file = join(dataDir, `calls-${gb}g.jsonl`);
    process.stdout.write(`generating ${file} (${gb} GB) if missing... `);
    const bytes = await ensureJsonl(file, gb * GB);
    process.stdout.write(`${fmt(bytes / 1e6, 0)} MB\n`);
    const row = new Map<JobName, Measured>();
    for (let r = 0; r < reps; r++) {
      for (const job of r === reps - 1 ? [...repeated, ...once] : repeated) {
        const m = await runChild(job, file);
        // Throughput: the best run (least disturbed). Memory: the worst run (peak RSS is a bound).
        const best = row.get(job);
        const worstRss = Math.max(m.peakRssMb, best?.peakRssMb ?? 0);
        row.set(job, !best || m.mbps > best.mbps ? { ...m, peakRssMb: worstRss } : { ...best, peakRssMb: worstRss });
        console.log(`  ${gb} GB  ${jobs[job].label.padEnd(55)} ${fmt(m.mbps).padStart(7)} MB/s  peak RSS ${fmt(m.peakRssMb).padStart(6)} MB  (${m.records} records)`);
      }
    }
    const b = row.get('b')!;
    for (const job of ['c', 'd', 'c+sha'] as const) {
      const m = row.get(job)!;
      if (m.records !== b.records || m.outputBytes !== b.outputBytes) {
        throw new Error(`job ${job} did different work than (b): ${m.records}/${m.outputBytes} vs ${b.records}/${b.outputBytes}`);
      }
    }
    results.set(gb, row);
  }

  console.log(`\nresults (MB/s: best of ${reps} for a, b, c; d and c+sha256 once; peak RSS: the highest of all runs):`);
  const verdicts: string[] = [];
  for (const [gb, row] of results) {
    const [a, b, c, d, cs] = (['a', 'b', 'c', 'd', 'c+sha'] as const).map((j) => row.get(j)!);
    const cb = c!.mbps / b!.mbps;
    console.log(
      `  ${gb} GB: a ${fmt(a!.mbps)} MB/s, b ${fmt(b!.mbps)}, c ${fmt(c!.mbps)}, d ${fmt(d!.mbps)}, c+sha256 ${fmt(cs!.mbps)}` +
        ` | c/b ${fmt(cb, 3)} (limit >= 0.85) | d/b ${fmt(d!.mbps / b!.mbps, 3)} | b/a ${fmt(b!.mbps / a!.mbps, 3)}` +
        ` | c+sha256/b ${fmt(cs!.mbps / b!.mbps, 3)} | peak RSS c ${fmt(c!.peakRssMb)} MB (limit <= 200)`,
    );
    verdicts.push(`c/b at ${gb} GB ${cb >= 0.85 ? 'PASS' : 'FAIL'}`, `peak RSS (c) at ${gb} GB ${c!.peakRssMb <= 200 ? 'PASS' : 'FAIL'}`);
  }
  const small = results.get(Math.min(...sizes))?.get('c');
  const large = results.get(Math.max(...sizes))?.get('c');
  if (small && large && sizes.length > 1) {
    const growth = large.peakRssMb / small.peakRssMb - 1;
    console.log(
      `  peak RSS of the engine: ${fmt(small.peakRssMb)} MB at ${Math.min(...sizes)} GB vs ${fmt(large.peakRssMb)} MB at ${Math.max(...sizes)} GB: ${growth >= 0 ? '+' : ''}${fmt(growth * 100)}% (limit within 10%)`,
    );
    verdicts.push(`RSS flat ${Math.abs(growth) <= 0.1 ? 'PASS' : 'FAIL'}`);
  }
  console.log(`\n${verdicts.join('; ')}`);
}

if (process.argv[2] === '--child') {
  child(process.argv[3] as JobName, process.argv[4]!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
