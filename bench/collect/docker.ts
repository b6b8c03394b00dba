/**
 * The docker runner's cost (issue 50): the same N demo samples at --concurrency 2, locally and each in its own
 * container; per sample, the harness's wall time in a container (create -> start -> wait -> remove) minus the local
 * one is the container's overhead (target <= 1 s). Then a Harbor task image found again by its digest (a cache hit).
 * Starts a private engine (scripts/docker-engine.sh) and stops it.
 *
 *   npm run bench:collect:docker                  # 12 samples
 *   npm run bench:collect:docker -- --samples 30
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { buildTaskImage } from '../../src/sources/docker-images.js';
import type { DockerApi } from '../../src/sources/docker-runner.js';

const run = promisify(execFile);
const job = fileURLToPath(new URL('./job.js', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts', 'docker-engine.sh');
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const n = Number(arg('--samples', '12'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const engineDir = mkdtempSync(join(tmpdir(), 'roller-bench-engine-'));
execFileSync(script, ['install'], { stdio: 'inherit' });
const host = execFileSync(script, ['start', engineDir], { encoding: 'utf8' }).trim();
const env = { ...process.env, DOCKER_HOST: host };
try {
  const image = execFileSync(script, ['base-image', engineDir], { encoding: 'utf8', env }).trim();
  const measure = async (withImage?: string) => {
    const out = mkdtempSync(join(tmpdir(), 'roller-bench-docker-'));
    try {
      const { stdout } = await run(process.execPath, [job, out, String(n), '2', ...(withImage ? [withImage] : [])], { env, maxBuffer: 64 << 20, timeout: 60 * 60_000 });
      const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { samples: number; ok: number; wall: number; harnessMs: number[] };
      if (r.ok !== r.samples) throw new Error(`${r.samples - r.ok} samples failed`);
      return r;
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  };
  const local = await measure();
  const docker = await measure(image);
  const overhead = (median(docker.harnessMs) - median(local.harnessMs)) / 1000;
  console.log(`collect: ${n} demo samples, Claude Code, scripted model, --concurrency 2`);
  console.log(`  local:  wall ${local.wall.toFixed(1)} s, harness ms/sample median ${median(local.harnessMs).toFixed(0)}`);
  console.log(`  docker: wall ${docker.wall.toFixed(1)} s, harness ms/sample median ${median(docker.harnessMs).toFixed(0)}`);
  console.log(`  container overhead per sample (median docker - local): ${overhead.toFixed(2)} s (target <= 1 s) ${overhead <= 1 ? 'PASS' : 'MISS'}`);
  process.env.DOCKER_HOST = host;
  const api = new Docker({ version: 'v1.41' }) as unknown as DockerApi;
  const context = join(root, 'examples', 'harbor', 'write-hello', 'environment');
  const t0 = performance.now();
  await buildTaskImage(api, context, 'roller-bench-task:1', 10 * 60_000);
  const built = performance.now() - t0;
  const t1 = performance.now();
  await buildTaskImage(api, context, 'roller-bench-task:1', 10 * 60_000);
  console.log(`  Harbor task image: built in ${(built / 1000).toFixed(2)} s, found again by its digest in ${(performance.now() - t1).toFixed(0)} ms`);
} finally {
  execFileSync(script, ['stop', engineDir], { stdio: 'inherit' });
  rmSync(engineDir, { recursive: true, force: true });
}
