import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectIsolation } from '../../src/sources/isolation.js';
import { runProcess } from '../../src/sources/process-runner.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('runner');
/** The process's start time (clock ticks since boot): with pid_max at 32768 a busy machine reuses pids. */
const startOf = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[19];
  } catch {
    return undefined;
  }
};
/** Running or sleeping, and the same process (its start time); a zombie is dead (in a container its reaper may be a PID 1 that never reaps). */
const alive = (pid: number, started = startOf(pid)) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat) && startOf(pid) === started;
  } catch {
    return false;
  }
};

describe('process runner, isolated (a PID namespace of its own)', () => {
  const isolation = detectIsolation();
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  it('this machine gives roller a PID namespace (util-linux unshare), or says why not', () => {
    expect(isolation.pidNamespace, isolation.reason).toBe(true);
  });

  it('the command sees only its own processes, its exit code and a death by signal come back as they were, and a setsid daemon ends with it', async () => {
    const pidFile = join(tmp.path, 'daemon.pid');
    const run = (script: string, name: string) =>
      runProcess({ command: 'sh', args: ['-c', script], cwd: tmp.path, env }, { timeoutMs: 20_000, stdoutPath: join(tmp.path, `${name}.out`), stderrPath: join(tmp.path, `${name}.err`), isolation });
    const seen = await run('ls /proc | grep -c "^[0-9]"; echo parent=$PPID; exit 7', 'own');
    expect(seen).toMatchObject({ exitCode: 7, signal: null });
    const [count, parent] = (await readFile(join(tmp.path, 'own.out'), 'utf8')).trim().split('\n');
    expect(Number(count)).toBeLessThanOrEqual(4); // init, sh, ls, grep
    expect(parent).toBe('parent=1'); // roller's process is not in its world
    const killed = await run('kill -9 $$', 'killed');
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    // A duration no other process on the machine has (a plain `sleep 300` elsewhere would be taken for the daemon).
    const marker = `300.${process.pid}`;
    await run(`setsid sh -c 'echo $$ > ${pidFile}; exec sleep ${marker}' </dev/null >/dev/null 2>&1 & sleep 0.3; exit 0`, 'daemon');
    // Its pid is the namespace's: find the daemon by its command line instead.
    const { execFileSync } = await import('node:child_process');
    const left = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker.replace('.', '\\.')}$`], { encoding: 'utf8' });
      } catch {
        return '';
      }
    };
    // The kernel kills the namespace's processes when its init ends; on a loaded machine the last one takes a moment
    // to be gone: waited for (10 s at most), never assumed.
    try {
      for (let i = 0; i < 100 && left() !== ''; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(left()).toBe('');
    } finally {
      for (const pid of left().split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL'); // a failure leaves no sleep behind
    }
  }, 30_000);
});

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
    const out = await runProcess(
      { command: 'sh', args: ['-c', `sleep 300 & echo $! > ${pidFile}; sleep 300`], cwd: tmp.path, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      { timeoutMs: 500, graceMs: 500, stdoutPath: join(tmp.path, 'b.out'), stderrPath: join(tmp.path, 'b.err') },
    );
    expect(out.timedOut).toBe(true);
    const child = Number((await readFile(pidFile, 'utf8')).trim());
    const started = startOf(child);
    try {
      // Killed at once, but on a loaded machine the kernel may take a while to tear it down: looked at until it is gone.
      for (let i = 0; i < 600 && alive(child, started); i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(child, started)).toBe(false);
    } finally {
      if (alive(child, started)) process.kill(child, 'SIGKILL'); // a failure leaves no sleep behind
    }
  }, 60_000);

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

describe('process runner when roller itself is killed', () => {
  it('a SIGKILLed roller takes the harness process group with it (the guard process)', async () => {
    const { spawn } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const pidFile = join(tmp.path, 'orphan.pid');
    const runner = fileURLToPath(new URL('../../dist/src/sources/process-runner.js', import.meta.url));
    // A roller stand-in: runs a long harness through runProcess, then gets SIGKILLed (no handler can run).
    const script = `import { runProcess } from ${JSON.stringify(runner)};
      await runProcess({ command: 'sh', args: ['-c', 'echo $$ > ${pidFile}; sleep 300'], cwd: ${JSON.stringify(tmp.path)}, env: { PATH: process.env.PATH } },
        { timeoutMs: 600000, stdoutPath: ${JSON.stringify(join(tmp.path, 'd.out'))}, stderrPath: ${JSON.stringify(join(tmp.path, 'd.err'))} });`;
    const roller = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    let harness = 0;
    for (let i = 0; i < 100 && !harness; i++) {
      await new Promise((r) => setTimeout(r, 50));
      harness = Number(readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }).trim()) || 0;
    }
    const started = startOf(harness);
    expect(alive(harness, started)).toBe(true);
    roller.kill('SIGKILL');
    // The guard is a Node process of its own: on a loaded machine it may take many seconds to start and see the pipe
    // close (a clean-clone run with other e2e work on the same two cores took over 15 s): waited for up to a minute.
    try {
      for (let i = 0; i < 1200 && alive(harness, started); i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(harness, started)).toBe(false);
    } finally {
      if (alive(harness, started)) process.kill(harness, 'SIGKILL'); // a failure leaves no sleep behind
    }
  }, 90_000);
});
