/**
 * Scale-out costs (issue 51), on the embedded scripted model with Claude Code's greeting task:
 *  1. N samples by one process, by a queue with 1, 2 and 4 workers, and by 2 shards merged: wall time against one
 *     process, and roller's own CPU per sample (the harness processes apart) — the coordinator's, and all of roller's
 *     processes together less the one process's: what queueing costs (target <= 50 ms per sample).
 *  2. roller merge of synthetic shards (a real sample copied, its big files hard-linked) of 2,000 and 10,000 samples:
 *     time (target <= 60 s for 10,000) and peak RSS (flat).
 * Starts a private Redis (scripts/redis-server.sh) and stops it.
 *
 *   npm run bench:scale                       # 24 samples
 *   npm run bench:scale -- --samples 48 --merge 2000,10000
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collect } from '../../src/index.js';
import type { Lock } from '../../src/schemas/lock.js';
import type { SampleInfo } from '../../src/schemas/run-info.js';
import { runLockDigest } from '../../src/pipelines/scale/shard.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'bin', 'roller');
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const n = Number(arg('--samples', '24'));
const mergeSizes = arg('--merge', '2000,10000').split(',').map(Number);
const work = mkdtempSync(join(tmpdir(), 'roller-bench-scale-'));
const tasks = join(work, 'tasks.jsonl');
writeFileSync(join(work, 'one-task.jsonl'), JSON.stringify({ id: 'hello', prompt: '[HELLO] 0' }));
writeFileSync(tasks, Array.from({ length: n }, (_, i) => JSON.stringify({ id: `hello-${i}`, prompt: `[HELLO] ${i}` })).join('\n'));
const base = { tasks, harness: 'claude-code', models: ['scripted/default'], captureCalls: true };
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** A roller process to its end: its stderr, and roller's own CPU as a worker says it. */
async function rollerProcess(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stderr: string; cpuMs: number; setupMs: number }> {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = await once(child, 'close');
  return { code: code as number | null, stderr, cpuMs: Number(/roller's own CPU (\d+) ms/.exec(stderr)?.[1] ?? Number.NaN), setupMs: Number(/\((\d+) ms of it starting/.exec(stderr)?.[1] ?? 0) };
}

/** Peak RSS of a child process (sampled from /proc every 50 ms) and its wall time. */
async function measured(args: string[]): Promise<{ code: number | null; wall: number; peakMb: number; stderr: string }> {
  const t0 = performance.now();
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
      peak = Math.max(peak, kb);
    } catch {
      // ended
    }
  }, 50);
  const [code] = await once(child, 'close');
  clearInterval(timer);
  return { code: code as number | null, wall: (performance.now() - t0) / 1000, peakMb: peak / 1024, stderr };
}

const redisDir = join(work, 'redis');
const script = join(root, 'scripts', 'redis-server.sh');
execFileSync(script, ['install'], { stdio: 'inherit' });
const url = execFileSync(script, ['start', redisDir], { encoding: 'utf8' }).trim();
try {
  console.log(`scale-out: ${n} greeting samples, Claude Code, scripted model, this machine (${readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length} CPUs)`);
  // A one-sample run first: what one process costs before and around its samples, to take out of the per-sample figure.
  const c00 = cpuMs();
  await collect({ ...base, tasks: join(work, 'one-task.jsonl'), output: join(work, 'one'), runName: 'single' });
  const singleCpu = cpuMs() - c00;
  const c0 = cpuMs();
  let t0 = performance.now();
  const one = await collect({ ...base, output: join(work, 'one'), runName: 'one' });
  const oneWall = (performance.now() - t0) / 1000;
  const oneCpu = cpuMs() - c0;
  if (one.info.summary.ok !== n) throw new Error(`one process: ${n - one.info.summary.ok} samples failed`);
  const marginal = (oneCpu - singleCpu) / (n - 1);
  console.log(`  one process:      wall ${oneWall.toFixed(1)} s; roller CPU ${(oneCpu / n).toFixed(0)} ms/sample (${marginal.toFixed(0)} ms each past the first)`);

  for (const workers of process.argv.includes('--merge-only') ? [] : [1, 2, 4]) {
    const name = `q${workers}`;
    const c1 = cpuMs();
    t0 = performance.now();
    const coordinator = collect({ ...base, output: join(work, name), runName: name, queue: { url, name }, onNotice: () => {} });
    const started = Array.from({ length: workers }, () => rollerProcess(['worker', '--queue', url, '--queue-name', name, '--until-empty', '--lock', '10']));
    const { info } = await coordinator;
    const wall = (performance.now() - t0) / 1000;
    const coordinatorCpu = cpuMs() - c1;
    const ws = await Promise.all(started);
    if (info.summary.ok !== n) throw new Error(`${workers} workers: ${n - info.summary.ok} samples failed`);
    const workersCpu = ws.reduce((a, w) => a + w.cpuMs, 0);
    const setup = ws.reduce((a, w) => a + w.setupMs, 0);
    // Per sample: the coordinator's CPU, and the workers' past their start (node, modules, planning the run) less what
    // one process spends on a sample.
    const overhead = coordinatorCpu / n + (workersCpu - setup) / n - marginal;
    console.log(
      `  queue, ${workers} worker${workers > 1 ? 's' : ' '}:  wall ${wall.toFixed(1)} s (${(oneWall / wall).toFixed(2)}x one process); coordinator ${(coordinatorCpu / n).toFixed(1)} ms/sample; workers ${((workersCpu - setup) / n).toFixed(0)} ms/sample + ${(setup / workers).toFixed(0)} ms each to start; coordination ${overhead.toFixed(1)} ms/sample (target <= 50) ${overhead <= 50 ? 'PASS' : 'MISS'}`,
    );
  }

  t0 = performance.now();
  const shards = await Promise.all([0, 1].map((i) => rollerProcess(['collect', '--tasks', tasks, '--harness', 'claude-code', '--capture-calls', '--output', join(work, 'sh'), '--run-name', 'sh', '--shard', `${i}/2`])));
  if (shards.some((s) => s.code !== 0)) throw new Error(`a shard failed: ${shards.map((s) => s.stderr).join('\n')}`);
  const merged = await rollerProcess(['merge', join(work, 'sh', 'sh.shard-0-of-2'), join(work, 'sh', 'sh.shard-1-of-2'), '--output', join(work, 'sh', 'sh')]);
  if (merged.code !== 0) throw new Error(merged.stderr);
  const shardWall = (performance.now() - t0) / 1000;
  console.log(`  2 shards + merge: wall ${shardWall.toFixed(1)} s (${(oneWall / shardWall).toFixed(2)}x one process)`);

  // Synthetic shards: one real sample as the template, its files hard-linked, its info.json rewritten per request.
  const template = join(one.runDir, one.info.samples[0]!.path);
  const templateInfo = JSON.parse(readFileSync(join(template, 'info.json'), 'utf8')) as SampleInfo;
  const lock = JSON.parse(readFileSync(join(one.runDir, 'lock.json'), 'utf8')) as Lock;
  const files = readdirSync(template, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(template, join(e.parentPath, e.name)));
  for (const size of mergeSizes) {
    const dir = join(work, `synthetic-${size}`);
    const requests = Array.from({ length: size }, (_, i) => ({ index: i, task_id: `t${i}`, model: 'scripted/default' }));
    const whole: Lock = { ...lock, requests };
    const digest = runLockDigest(whole);
    const t1 = performance.now();
    for (const s of [0, 1]) {
      const shard = join(dir, `syn.shard-${s}-of-2`);
      mkdirSync(shard, { recursive: true });
      writeFileSync(join(shard, 'lock.json'), JSON.stringify({ ...whole, part: { kind: 'shard', index: s, count: 2, run_lock_digest: digest } }));
      for (const r of requests.filter((q) => q.index % 2 === s)) {
        const sample = join(shard, 'samples', 'scripted_default', `${String(r.index).padStart(4, '0')}_${r.task_id}`);
        for (const f of files) {
          mkdirSync(join(sample, f, '..'), { recursive: true });
          if (f === 'info.json') writeFileSync(join(sample, f), JSON.stringify({ ...templateInfo, index: r.index, task_id: r.task_id, provenance: { ...templateInfo.provenance, task_id: r.task_id } }));
          else linkSync(join(template, f), join(sample, f));
        }
      }
    }
    const made = (performance.now() - t1) / 1000;
    const m = await measured(['merge', join(dir, 'syn.shard-0-of-2'), join(dir, 'syn.shard-1-of-2'), '--output', join(dir, 'syn')]);
    if (m.code !== 0) throw new Error(m.stderr);
    const sft = statSync(join(dir, 'syn', 'sft.jsonl')).size;
    console.log(`  merge of ${size} samples (2 shards, ${files.length} files each; made in ${made.toFixed(1)} s): ${m.wall.toFixed(1)} s${size >= 10_000 ? ` (target <= 60 s) ${m.wall <= 60 ? 'PASS' : 'MISS'}` : ''}, peak RSS ${m.peakMb.toFixed(0)} MB, sft.jsonl ${(sft / 2 ** 20).toFixed(1)} MB`);
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  execFileSync(script, ['stop', redisDir]);
  rmSync(work, { recursive: true, force: true });
}
