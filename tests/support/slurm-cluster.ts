import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { repoRoot } from './paths.js';
import { sh } from './sh.js';

const script = join(repoRoot, 'scripts', 'slurm-cluster.sh');

export interface TestCluster {
  /** The environment its commands need (SLURM_CONF). */
  env: NodeJS.ProcessEnv;
  /** A Slurm command against this cluster. */
  run(args: string[]): { code: number; stdout: string; stderr: string };
}


/**
 * A private single-node Slurm cluster for one test file (scripts/slurm-cluster.sh): slurm-wlm and munge installed when
 * missing and apt is there (root), started under a temp directory, stopped after the file's tests; or why there is none.
 */
export function startTestCluster(): TestCluster | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'slurmd runs jobs as their users and needs root; run the suite as root (CI does)' };
  const installed = sh([script, 'install']);
  if (installed.code !== 0) return { reason: installed.stderr.trim() };
  const dir = mkdtempSync(join(tmpdir(), 'roller-slurm-'));
  const started = sh([script, 'start', dir]);
  if (started.code !== 0) throw new Error(`the test cluster did not start: ${started.stderr}`);
  const env = { ...process.env, SLURM_CONF: started.stdout.trim().replace(/^SLURM_CONF=/, '') };
  afterAll(() => {
    const stopped = sh([script, 'stop', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(stopped.code, stopped.stderr).toBe(0);
  }, 60_000);
  return { env, run: (args) => sh(args, env) };
}

/** Waits until Slurm has ended the job (no longer queued or running), and answers its final state. */
export async function jobEnd(cluster: TestCluster, job: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const shown = cluster.run(['scontrol', 'show', 'job', job]).stdout;
    const state = /JobState=(\w+)/.exec(shown)?.[1] ?? 'UNKNOWN';
    if (!['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'UNKNOWN'].includes(state)) return state;
    if (Date.now() > deadline) return `still ${state} after ${timeoutMs} ms`;
    await new Promise((r) => setTimeout(r, 500));
  }
}
