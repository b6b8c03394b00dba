/**
 * Collect benchmark (issue 32): roller's own time per sample — everything but the harness process (the proxy, the
 * projection, conversion, the capture, the sinks) — against the harness process's wall time, and collect's peak RSS
 * at 10 and 200 samples (flat). Each run is a child process (job.ts) whose own peak RSS is roller's alone.
 *
 *   npm run bench:collect                       # 10 and 200 samples of the demo tasks, Claude Code, scripted model
 *   npm run bench:collect -- --sizes 10,50
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const job = fileURLToPath(new URL('./job.js', import.meta.url));
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const sizes = arg('--sizes', '10,200').split(',').map(Number);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const results: { n: number; rss: number }[] = [];
console.log('collect: demo tasks on the scripted model, Claude Code, --concurrency 1');
console.log('  samples   wall s   harness ms/sample (median)   roller ms/sample (median, p90)   roller / harness   peak RSS MB');
for (const n of sizes) {
  const out = mkdtempSync(join(tmpdir(), 'roller-bench-collect-'));
  try {
    const { stdout } = await run(process.execPath, [job, out, String(n), '1'], { maxBuffer: 64 << 20, timeout: 3 * 60 * 60_000 });
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { samples: number; ok: number; wall: number; ownMs: number[]; harnessMs: number[]; peakRssMb: number };
    if (r.ok !== r.samples) throw new Error(`${r.samples - r.ok} samples failed`);
    const ratio = median(r.ownMs) / median(r.harnessMs);
    results.push({ n, rss: r.peakRssMb });
    console.log(`  ${String(n).padStart(7)}  ${r.wall.toFixed(1).padStart(7)}  ${median(r.harnessMs).toFixed(0).padStart(27)}  ${`${median(r.ownMs).toFixed(0)}, ${pct(r.ownMs, 90).toFixed(0)}`.padStart(31)}  ${ratio.toFixed(3).padStart(16)}  ${r.peakRssMb.toFixed(0).padStart(11)}`);
    console.log(`  roller's own time per sample is ${(ratio * 100).toFixed(1)}% of the harness process's (target <= 10%) ${ratio <= 0.1 ? 'PASS' : 'MISS'}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
if (results.length > 1) {
  const growth = results.at(-1)!.rss / results[0]!.rss;
  console.log(`peak RSS ${results.map((r) => `${r.rss.toFixed(0)} MB at ${r.n}`).join(', ')}: ${results.at(-1)!.n} / ${results[0]!.n} samples = ${growth.toFixed(2)} (target: flat, within 10%) ${growth <= 1.1 ? 'PASS' : 'MISS'}`);
}
