/**
 * `roller reprocess` against the parse limit of the same bytes, in one run:
 *   - the archive: a real Claude Code run (a long session on the scripted model, raw/ kept) replicated with
 *     fresh ids to 1 GB and 4 GB of capture evidence (generated once under bench/data/);
 *   - the limit: split + JSON.parse of every JSONL line of that evidence, one thread (what any reader pays);
 *   - roller reprocess as a child process at --concurrency 1 and 2 (wall, CPU, peak RSS from getrusage).
 *
 *   npm run bench:reprocess
 *   npm run bench:reprocess -- --gb 1          # skip the 4 GB archive
 *   npm run bench:reprocess -- --runs 3        # best of 3 (this VM moves by 20-30% between runs)
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { archiveJsonl, generateArchive, sizeOf } from './generate.js';
import { parseLines } from './parse-lines.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const data = join(repo, 'bench', 'data');
const roller = join(repo, 'bin', 'roller');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** A command under python's getrusage(RUSAGE_CHILDREN): wall s, CPU s (and its kernel part), peak RSS MB (the process and its threads). */
async function measured(cmd: string[]): Promise<{ wall: number; cpu: number; sys: number; rssMb: number; stderr: string }> {
  const py = [
    'import json,resource,subprocess,sys,time',
    't=time.time(); p=subprocess.run(sys.argv[1:], capture_output=True, text=True); w=time.time()-t',
    'r=resource.getrusage(resource.RUSAGE_CHILDREN)',
    'print(json.dumps({"wall":w,"cpu":r.ru_utime+r.ru_stime,"sys":r.ru_stime,"rss":r.ru_maxrss/1024,"code":p.returncode,"err":p.stderr[-3000:]}))',
  ].join('\n');
  const { stdout } = await run('python3', ['-c', py, ...cmd], { maxBuffer: 64 << 20 });
  const r = JSON.parse(stdout) as { wall: number; cpu: number; sys: number; rss: number; code: number; err: string };
  if (r.code !== 0) throw new Error(`${cmd.join(' ')} exited ${r.code}: ${r.err}`);
  return { wall: r.wall, cpu: r.cpu, sys: r.sys, rssMb: r.rss, stderr: r.err };
}

/** The base archive: one long real session, collected once. */
async function baseArchive(): Promise<string> {
  const base = join(data, 'reprocess-base');
  const runDir = join(base, 'long');
  if (existsSync(join(runDir, 'info.json'))) return runDir;
  mkdirSync(base, { recursive: true });
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma'];
  let seed = 7;
  const pick = () => words[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % words.length]!;
  const big = Array.from({ length: 220 }, () => Array.from({ length: 12 }, pick).join(' ')).join('\n') + '\n';
  const tasks = join(base, 'tasks.jsonl');
  writeFileSync(tasks, `${JSON.stringify({ id: 'long', prompt: '[LONG] Read big.txt many times.', files: { 'big.txt': big } })}\n`);
  process.stdout.write('collecting the base archive (real Claude Code, 41 calls)... ');
  await run(roller, ['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', base, '--run-name', 'long', '--capture-calls', '--capture-debug', 'full'], { maxBuffer: 64 << 20 });
  process.stdout.write('done\n');
  return runDir;
}

function archive(base: string, gb: number): string {
  const dir = join(data, `reprocess-${gb}g`, 'run');
  if (!existsSync(join(dir, 'info.json'))) {
    process.stdout.write(`generating ${dir} (${gb} GB)... `);
    const g = generateArchive(base, dir, gb * 1e9);
    process.stdout.write(`${g.samples} samples\n`);
  }
  return dir;
}

/** split + JSON.parse of every line, one thread, page cache warm: MB/s over the JSONL bytes. */
function parseLimit(files: string[]): { mbps: number; bytes: number } {
  let bytes = 0;
  let seconds = 0;
  for (const f of files) {
    const buf = readFileSync(f);
    const t = process.hrtime.bigint();
    parseLines(buf);
    seconds += Number(process.hrtime.bigint() - t) / 1e9;
    bytes += buf.length;
  }
  return { mbps: bytes / 1e6 / seconds, bytes };
}

/**
 * The same split + JSON.parse in two threads at once, each over half of the files: how much two threads of
 * pure parsing gain over one on this machine — the ceiling of any --concurrency 2 speed-up here (a VM's two
 * vCPUs may share a core, and the kernel's page-cache copies need CPU too).
 */
async function parallelParseLimit(files: string[]): Promise<number> {
  // Halves of equal bytes (a sample's files alternate big calls.jsonl / small native logs: split by size).
  const halves: string[][] = [[], []];
  const load = [0, 0];
  for (const f of [...files].sort((a, b) => statSync(b).size - statSync(a).size)) {
    const k = load[0]! <= load[1]! ? 0 : 1;
    halves[k]!.push(f);
    load[k]! += statSync(f).size;
  }
  const t = process.hrtime.bigint();
  const bytes = await Promise.all(halves.map((h) => new Promise<number>((resolve, reject) => {
    const w = new Worker(new URL('./parse-lines.js', import.meta.url), { workerData: h });
    w.once('message', resolve);
    w.once('error', reject);
  })));
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  return bytes.reduce((a, b) => a + b, 0) / 1e6 / seconds;
}

/** Memory copy in one thread, then in two at once (each the same work): the speed-up two threads get. */
async function copySpeedup(): Promise<number> {
  const ROUNDS = 40;
  const inWorkers = async (n: number) => {
    const t = process.hrtime.bigint();
    await Promise.all(Array.from({ length: n }, () => new Promise<number>((resolve, reject) => {
      const w = new Worker(new URL('./copy-bandwidth.js', import.meta.url), { workerData: { copyRounds: ROUNDS } });
      w.once('message', resolve);
      w.once('error', reject);
    })));
    return Number(process.hrtime.bigint() - t) / 1e9;
  };
  const one = await inWorkers(1);
  const two = await inWorkers(2);
  return (2 * one) / two;
}

async function reprocessOnce(archiveDir: string, concurrency: number) {
  const out = join(data, 'reprocess-out');
  rmSync(out, { recursive: true, force: true });
  await run('sh', ['-c', `cat $(find ${archiveDir} -type f) > /dev/null`], { maxBuffer: 1 << 20 }); // page cache warm, like the limit
  const m = await measured([roller, 'reprocess', archiveDir, '--output', out, '--concurrency', String(concurrency)]);
  rmSync(out, { recursive: true, force: true });
  return m;
}

async function main(): Promise<void> {
  const gbs = arg('--gb', '1,4').split(',').map(Number);
  const base = await baseArchive();
  const small = archive(base, gbs[0]!);
  const evidence = (dir: string) => sizeOf(archiveJsonl(dir));
  const runs = Number(arg('--runs', '1'));
  const files = archiveJsonl(small);
  const smallBytes = evidence(small);
  // This VM moves by 20-30% from run to run: each figure is the best of --runs, the runs interleaved.
  let limit = { mbps: 0, bytes: 0 };
  let limit2 = 0;
  let copy2 = 0;
  let c1: Awaited<ReturnType<typeof reprocessOnce>> | undefined;
  let c2: Awaited<ReturnType<typeof reprocessOnce>> | undefined;
  // Peak memory is compared as the highest of the runs at either size (the best run's own figure is a draw).
  let c2Peak = 0;
  for (let r = 0; r < runs; r++) {
    const l = parseLimit(files);
    if (l.mbps > limit.mbps) limit = l;
    limit2 = Math.max(limit2, await parallelParseLimit(files));
    copy2 = Math.max(copy2, await copySpeedup());
    const a = await reprocessOnce(small, 1);
    if (!c1 || a.wall < c1.wall) c1 = a;
    const b = await reprocessOnce(small, 2);
    c2Peak = Math.max(c2Peak, b.rssMb);
    if (!c2 || b.wall < c2.wall) c2 = b;
  }
  if (!c1 || !c2) throw new Error('--runs must be at least 1');
  const mb = (b: number, s: number) => b / 1e6 / s;
  const lines = [
    `best of ${runs} run(s) each`,
    `archive ${gbs[0]} GB: ${(smallBytes / 1e9).toFixed(2)} GB of JSONL evidence (calls.jsonl + native session files)`,
    `parse limit (split + JSON.parse, 1 thread): ${limit.mbps.toFixed(0)} MB/s; 2 threads at once: ${limit2.toFixed(0)} MB/s = ${(limit2 / limit.mbps).toFixed(2)} x (this machine's ceiling for a 2-way speed-up)`,
    `memory copy (64 MB buffers): 2 threads at once = ${copy2.toFixed(2)} x one (memory bandwidth: the other ceiling)`,
    `reprocess --concurrency 1: ${c1.wall.toFixed(1)} s = ${mb(smallBytes, c1.wall).toFixed(0)} MB/s = ${(mb(smallBytes, c1.wall) / limit.mbps).toFixed(2)} x limit (target >= 0.5); CPU ${c1.cpu.toFixed(1)} s (kernel ${c1.sys.toFixed(1)}); peak RSS ${c1.rssMb.toFixed(0)} MB`,
    `reprocess --concurrency 2: ${c2.wall.toFixed(1)} s = ${mb(smallBytes, c2.wall).toFixed(0)} MB/s = ${(c1.wall / c2.wall).toFixed(2)} x concurrency 1 (target >= 1.6; ${((c1.wall / c2.wall) / (limit2 / limit.mbps)).toFixed(2)} of the parse ceiling); CPU ${c2.cpu.toFixed(1)} s (kernel ${c2.sys.toFixed(1)}); peak RSS ${c2Peak.toFixed(0)} MB (highest of ${runs})`,
    // What a second worker can add at most: the machine's two-thread ceiling, over the cores one worker already
    // keeps busy (V8's helper threads run beside it).
    `cores busy at --concurrency 1: ${(c1.cpu / c1.wall).toFixed(2)}; at 2: ${(c2.cpu / c2.wall).toFixed(2)} — bound for the 2-way speed-up: parse ceiling / cores at 1 = ${(limit2 / limit.mbps / (c1.cpu / c1.wall)).toFixed(2)} x, memory-copy ceiling / cores at 1 = ${(copy2 / (c1.cpu / c1.wall)).toFixed(2)} x`,
  ];
  if (gbs[1]) {
    const large = archive(base, gbs[1]);
    const largeBytes = evidence(large);
    let l2: Awaited<ReturnType<typeof reprocessOnce>> | undefined;
    let l2Peak = 0;
    for (let r = 0; r < runs; r++) {
      const l = await reprocessOnce(large, 2);
      l2Peak = Math.max(l2Peak, l.rssMb);
      if (!l2 || l.wall < l2.wall) l2 = l;
    }
    lines.push(
      `archive ${gbs[1]} GB: ${(largeBytes / 1e9).toFixed(2)} GB; reprocess --concurrency 2: ${l2!.wall.toFixed(1)} s = ${mb(largeBytes, l2!.wall).toFixed(0)} MB/s; CPU ${l2!.cpu.toFixed(1)} s (kernel ${l2!.sys.toFixed(1)}); peak RSS ${l2Peak.toFixed(0)} MB (highest of ${runs})`,
      `peak RSS ${gbs[1]} GB / ${gbs[0]} GB (--concurrency 2, highest of ${runs} each: ${l2Peak.toFixed(0)} / ${c2Peak.toFixed(0)} MB): ${(l2Peak / c2Peak).toFixed(2)} (target: flat within 10%; <= 200 MB)`,
    );
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
}

await main();
