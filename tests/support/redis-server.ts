import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { repoRoot } from './paths.js';
import { sh } from './sh.js';

const script = join(repoRoot, 'scripts', 'redis-server.sh');


/**
 * A private Redis for one test file (scripts/redis-server.sh, with a password): installed when missing and apt is there
 * (root), stopped after the file's tests; or why there is none.
 */
export function startTestRedis(password: string): { url: string } | { reason: string } {
  const installed = sh([script, 'install']);
  if (installed.code !== 0) return { reason: installed.stderr.trim() };
  const dir = mkdtempSync(join(tmpdir(), 'roller-redis-'));
  const started = sh([script, 'start', dir, password]);
  if (started.code !== 0) throw new Error(`the test Redis did not start: ${started.stderr}`);
  afterAll(() => {
    const stopped = sh([script, 'stop', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(stopped.code, stopped.stderr).toBe(0);
  }, 30_000);
  return { url: started.stdout.trim() };
}
