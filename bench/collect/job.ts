/**
 * One collect run, in this process (so its peak RSS is roller's alone: the harness processes are children, whose
 * memory getrusage keeps apart): N samples of the demo tasks on the embedded scripted model. Prints a JSON line:
 * samples, wall time, and per sample roller's own time (elapsed minus the harness process's wall time).
 *   node dist/bench/collect/job.js OUT N CONCURRENCY [IMAGE]     (IMAGE: --runner docker in it, DOCKER_HOST's engine)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect } from '../../src/index.js';
import type { SampleInfo } from '../../src/schemas/run-info.js';

const [out = '', n = '10', concurrency = '1', image] = process.argv.slice(2);
const demo = readFileSync(new URL('../../../examples/tasks/demo.jsonl', import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string });
const tasks = join(out, 'tasks.jsonl');
writeFileSync(tasks, Array.from({ length: Number(n) }, (_, i) => JSON.stringify({ ...demo[i % demo.length]!, id: `${demo[i % demo.length]!.id}-${i}` })).join('\n'));
const t0 = performance.now();
const { runDir, info } = await collect({ tasks, harness: 'claude-code', models: ['scripted/default'], output: out, runName: `n${n}`, concurrency: Number(concurrency), captureCalls: true, ...(image ? { runner: 'docker' as const, docker: { image } } : {}) });
const wall = (performance.now() - t0) / 1000;
const own: number[] = [];
const harness: number[] = [];
for (const row of info.samples) {
  const s = JSON.parse(readFileSync(join(runDir, row.path, 'info.json'), 'utf8')) as SampleInfo;
  for (const a of s.attempts) {
    harness.push(a.harness_ms ?? Number.NaN);
    own.push(a.elapsed_ms - (a.harness_ms ?? Number.NaN));
  }
}
process.stdout.write(
  `${JSON.stringify({ samples: info.samples.length, ok: info.summary.ok, wall, ownMs: own, harnessMs: harness, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
