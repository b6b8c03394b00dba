import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/sources/process-runner.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('runner');
/** Running or sleeping; a zombie is dead (in a container its reaper may be a PID 1 that never reaps). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
};

describe('process runner', () => {
  it('keeps stdout and stderr in files and records the exit status', async () => {
    const out = await runProcess(
      { command: 'sh', args: ['-c', 'echo hello; echo oops >&2; exit 3'], cwd: tmp.path, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      { timeoutMs: 10_000, stdoutPath: join(tmp.path, 'a.out'), stderrPath: join(tmp.path, 'a.err') },
    );
    expect(out).toMatchObject({ exitCode: 3, timedOut: false });
    expect(await readFile(join(tmp.path, 'a.out'), 'utf8')).toBe('hello\n');
    expect(await readFile(join(tmp.path, 'a.err'), 'utf8')).toBe('oops\n');
  });

  it('a timeout kills the whole process group, background children included', async () => {
    const pidFile = join(tmp.path, 'child.pid');
    const started = Date.now();
    const out = await runProcess(
      { command: 'sh', args: ['-c', `sleep 300 & echo $! > ${pidFile}; sleep 300`], cwd: tmp.path, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      { timeoutMs: 500, graceMs: 500, stdoutPath: join(tmp.path, 'b.out'), stderrPath: join(tmp.path, 'b.err') },
    );
    expect(out.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    const child = Number((await readFile(pidFile, 'utf8')).trim());
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(child)).toBe(false);
  });

  it('an abort ends the run the same way', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const out = await runProcess(
      { command: 'sleep', args: ['300'], cwd: tmp.path, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      { timeoutMs: 60_000, stdoutPath: join(tmp.path, 'c.out'), stderrPath: join(tmp.path, 'c.err'), signal: controller.signal },
    );
    expect(out).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM' });
  });
});
