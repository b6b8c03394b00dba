import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { repoRoot } from './paths.js';
import { sh } from './sh.js';

/** A private Docker engine for one test file (scripts/docker-engine.sh): started at import, stopped after its tests. */
export interface TestEngine {
  /** DOCKER_HOST of the engine. */
  host: string;
  /** The base image (Debian minbase + this node, user `agent`), built once per machine, imported per engine. */
  image: string;
  /** Runs the docker CLI against this engine. */
  docker(args: string[]): { code: number; stdout: string; stderr: string };
}

const script = join(repoRoot, 'scripts', 'docker-engine.sh');


/**
 * The engine, or why there is none: docker.io is installed when it is missing and apt is there (root); a machine
 * without apt skips, saying so. Everything roller made is checked gone at the end (containers, networks, mounts).
 */
export function startTestEngine(): TestEngine | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'a private dockerd and its base image (debootstrap) need root; run the suite as root (CI does)' };
  const installed = sh([script, 'install']);
  if (installed.code !== 0) return { reason: installed.stderr.trim() };
  const dir = mkdtempSync(join(tmpdir(), 'roller-engine-'));
  const started = sh([script, 'start', dir]);
  if (started.code !== 0) throw new Error(`the test engine did not start: ${started.stderr}`);
  const host = started.stdout.trim();
  const built = sh([script, 'base-image', dir]);
  if (built.code !== 0) throw new Error(`the base image was not built: ${built.stderr}`);
  const env = { ...process.env, DOCKER_HOST: host };
  afterAll(() => {
    const left = sh([script, 'leftovers', dir], env);
    const stopped = sh([script, 'stop', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(left.stdout.trim(), 'containers, networks or volumes left on the engine').toBe('');
    expect(stopped.code, stopped.stderr).toBe(0);
  }, 60_000);
  return { host, image: built.stdout.trim(), docker: (args) => sh(['docker', ...args], env) };
}
