/**
 * A roller that is not root cannot hand a sample's directories to another user, so `--docker-user` naming another
 * one is refused before any engine is asked — said plainly, not an EPERM from deep inside a run. Run as a real
 * unprivileged user (setpriv, when the suite runs as root).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { rollerBin } from '../support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'roller-docker-user-'));
chmodSync(dir, 0o777);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a non-root roller refuses --docker-user of another user, naming both, before any engine is asked', () => {
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(tasks, '{"id":"a","prompt":"[HELLO] a"}\n', { mode: 0o644 });
  const root = process.getuid?.() === 0;
  const me = root ? 65534 : process.getuid!();
  const args = ['collect', '--tasks', tasks, '--runner', 'docker', '--image', 'no-such-image', '--docker-user', String(me + 1), '--output', join(dir, 'out')];
  const r = root
    ? spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, rollerBin, ...args], { encoding: 'utf8', env: { ...process.env, HOME: dir } })
    : spawnSync(rollerBin, args, { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(2);
  expect(r.stderr).toContain(`--docker-user ${me + 1}:${me + 1}: roller runs as ${me}:`);
  expect(r.stderr).toContain('leave --docker-user out (your own user), or run roller as root');
});
