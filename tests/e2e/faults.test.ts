/**
 * Faults and bad input a careful user runs into (issue 31), each with real files, processes and signals: the real
 * Claude Code CLI on the scripted model where a run is needed. Every refusal must say what, where and what to do —
 * never a stack trace, a hang, or a silent success.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunInfo, SampleInfo } from '../../src/schemas/index.js';
import { roller, type Ran } from '../support/collect-run.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('faults');

function tasksFile(name: string, tasks: object[]): string {
  const path = join(tmp.path, name);
  writeFileSync(path, tasks.map((t) => JSON.stringify(t)).join('\n'));
  return path;
}

const readJson = <T = Json>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const noStackTrace = (r: Ran) => expect(r.stderr, r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);

/** A read-only directory: a read-only bind mount as root (root ignores modes), mode 0555 otherwise. */
const mounts: string[] = [];
function readOnlyDir(path: string): void {
  mkdirSync(path, { recursive: true });
  if (process.getuid?.() === 0) {
    execFileSync('mount', ['--bind', path, path]);
    mounts.push(path);
    execFileSync('mount', ['-o', 'remount,bind,ro', path]);
  } else execFileSync('chmod', ['0555', path]);
}
afterAll(() => {
  for (const m of mounts.reverse()) execFileSync('umount', [m]);
});

describe('collect: the output location is checked before anything runs', () => {
  const hello = () => tasksFile('hello.jsonl', [{ id: 'hello', prompt: '[HELLO]' }]);

  it('1. under /proc, a file, a run name that is a file, a read-only mount, --resume into a read-only run: each says which check failed and where', async () => {
    const file = join(tmp.path, 'a-file');
    writeFileSync(file, 'not a directory');
    mkdirSync(join(tmp.path, 'runs-with-file'), { recursive: true });
    writeFileSync(join(tmp.path, 'runs-with-file', 'taken'), 'a file where the run goes');
    const ro = join(tmp.path, 'read-only');
    readOnlyDir(ro);
    const roRun = join(tmp.path, 'ro-runs', 'old');
    mkdirSync(roRun, { recursive: true });
    writeFileSync(join(roRun, 'lock.json'), '{}');
    readOnlyDir(roRun);
    const cases: [string[], RegExp][] = [
      [['--output', '/proc/roller-nowhere/runs'], /--output \/proc\/roller-nowhere\/runs cannot be created \(ENOENT\); choose a location you can write to/],
      [['--output', file], new RegExp(`--output ${file} is a file, not a directory; choose a directory`)],
      [['--output', join(file, 'runs')], new RegExp(`--output ${file}/runs: it, or a path above it, is a file, not a directory; choose a directory`)],
      [['--output', join(tmp.path, 'runs-with-file'), '--run-name', 'taken'], /the run directory \(--output .*runs-with-file --run-name taken\) .*taken is a file, not a directory/],
      [['--output', ro, '--run-name', 'r'], new RegExp(`--output ${ro} is not writable \\((EROFS|EACCES)\\); choose a location you can write to`)],
      [['--output', join(tmp.path, 'ro-runs'), '--run-name', 'old', '--resume'], /the run directory \(--output .*ro-runs --run-name old\) .*old is not writable \((EROFS|EACCES)\)/],
    ];
    for (const [args, message] of cases) {
      const r = await roller(['collect', '--capture-calls', '--tasks', hello(), '--harness', 'claude-code', ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      noStackTrace(r);
    }
  }, 120_000);

  it('2. a run name is one safe path segment: ../escaped is refused and nothing is written outside --output', async () => {
    const out = join(tmp.path, 'contained', 'runs');
    for (const name of ['../escaped', 'a/b', '..', '.hidden']) {
      const r = await roller(['collect', '--capture-calls', '--tasks', hello(), '--harness', 'claude-code', '--output', out, '--run-name', name]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--run-name '${name}': a run name is one directory name`);
      noStackTrace(r);
    }
    expect(existsSync(join(tmp.path, 'contained', 'escaped'))).toBe(false);
    expect(existsSync(out)).toBe(false);
  });

  it('10. a model API that cannot be reached is said before the first sample, in seconds, not a --timeout per sample', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const config = join(tmp.path, 'dead-model.json');
    writeFileSync(config, JSON.stringify({ models: { 'acme/dead': { api_base: `http://127.0.0.1:${port}`, api_key_env: 'ACME_KEY' } } }));
    const r = await roller(['collect', '--capture-calls', '--tasks', hello(), '--harness', 'claude-code', '--model', 'acme/dead', '--model-config', config, '--output', join(tmp.path, 'dead-runs'), '--run-name', 'dead'], { env: { ...process.env, ACME_KEY: 'k-test' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--model acme/dead: the model API at http://127.0.0.1:${port}/ cannot be reached (ECONNREFUSED); nothing was run`);
    noStackTrace(r);
    expect(existsSync(join(tmp.path, 'dead-runs', 'dead'))).toBe(false);
  });
});

describe('collect: one run, one collector; a killed run is said so and resumed clean (real Claude Code)', () => {
  it('3, 4, 6: a run in use is refused to a second collect, resume or reprocess; kill -9 is said by validate-run; --resume takes over, cleans and records', async () => {
    const out = join(tmp.path, 'runs');
    const tasks = tasksFile('lock-tasks.jsonl', [
      { id: 'first', prompt: '[HELLO] one' },
      { id: 'slow', prompt: '[STALL-ONCE] two', timeout_s: 30 },
    ]);
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'shared', '--capture-debug', 'full'];
    const run = join(out, 'shared');
    const refusals: Ran[] = [];
    let killed = false;
    const first = roller(args, {
      onStderr: (text, child) => {
        if (killed || !text.includes('started 1_slow')) return;
        killed = true;
        void (async () => {
          // While the first collect runs sample 1: a resume, a fresh collect and a reprocess of the run are refused.
          refusals.push(await roller([...args, '--resume']));
          refusals.push(await roller(args));
          refusals.push(await roller(['reprocess', run, '--output', join(tmp.path, 'reprocessed-early')]));
          child.kill('SIGKILL');
        })();
      },
    });
    const firstRun = await first;
    expect(killed, firstRun.stderr).toBe(true);
    const holder = readJson<{ pid: number }>(join(run, '.roller.lock'));
    expect(refusals.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(refusals[0]!.stderr).toContain(`the run ${run} is in use by pid ${holder.pid} on`);
    expect(refusals[1]!.stderr).toContain(`is in use by pid ${holder.pid}`);
    expect(refusals[2]!.stderr).toContain(`the archive ${run} is being collected by pid ${holder.pid}`);
    for (const r of refusals) noStackTrace(r);

    // 4. killed: validate-run says so, names what is left and how to resume.
    const validated = await roller(['validate-run', run]);
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain(`info.json: the run was killed: info.json says 'running', but its collect process (pid ${holder.pid}`);
    expect(validated.stdout).toContain(`resume it with: roller collect --tasks ${tasks} --harness claude-code --model scripted/default --output ${out} --run-name shared --capture-calls --capture-debug full --resume`);
    const leftover = /its temporary directory (\S+) is left/.exec(validated.stdout)?.[1];
    expect(leftover, validated.stdout).toBeDefined();
    expect(existsSync(leftover!)).toBe(true);

    // 3. the stale lock is taken over only by --resume.
    const fresh = await roller(args);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain(`was left by pid ${holder.pid}`);
    expect(fresh.stderr).toContain('which is gone (killed?); pass --resume to take it over');

    // 6. a resume that changes what capture/ keeps is refused (and leaves the stale lock as it was); concurrency and
    // retries may change, and are recorded.
    const lockBefore = readFileSync(join(run, 'lock.json'), 'utf8');
    const changed = await roller([...args.filter((a) => a !== 'full' && a !== '--capture-debug'), '--capture-debug', 'off', '--resume']);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain('$.options.capture_debug: "full" -> "off"');
    expect(readJson<{ pid: number }>(join(run, '.roller.lock')).pid).toBe(holder.pid);
    const resumed = await roller([...args, '--resume', '--concurrency', '2', '--retries', '1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(leftover!)).toBe(false);
    expect(readFileSync(join(run, 'lock.json'), 'utf8')).toBe(lockBefore);
    expect(existsSync(join(run, '.roller.lock'))).toBe(false);
    expect(existsSync(join(run, '.running'))).toBe(false); // nothing of the notes stays once every attempt ended
    const info = readJson<RunInfo>(join(run, 'info.json'));
    expect(info.state).toBe('finished');
    expect(info.resume_history).toEqual([
      { at: expect.any(String), took_over: expect.stringContaining(`pid ${holder.pid} on`), cleaned: [leftover], changes: { concurrency: { from: 1, to: 2 }, retries: { from: 0, to: 1 } } },
    ]);
    expect(info.config).toMatchObject({ concurrency: 2, retries: 1, capture_debug: 'full' });
    expect(info.samples.map((s) => [s.task_id, s.status])).toEqual([
      ['first', 'skipped'],
      ['slow', 'ok'],
    ]);
    expect((await roller(['validate-run', run])).code).toBe(0);
  }, 10 * 60_000);
});

describe('collect: what a finished run holds, and what is done with its archive (real Claude Code)', () => {
  let run = '';
  let info: RunInfo;
  const sample = (i: number) => readJson<SampleInfo>(join(run, info.samples[i]!.path, 'info.json'));
  beforeAll(async () => {
    const out = join(tmp.path, 'archive-runs');
    const tasks = tasksFile('archive-tasks.jsonl', [
      { id: 'first', prompt: '[HELLO] one', output_dirs: ['never-made'] },
      { id: 'second', prompt: '[HELLO] two' },
      { id: 'linked', prompt: '[SYMLINK-DIR] Link a directory.', output_dirs: ['link/sub'] },
    ]);
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'archive', '--capture-debug', 'full']);
    expect(r.code, r.stderr).toBe(1); // the linked sample is an error
    run = join(out, 'archive');
    info = readJson<RunInfo>(join(run, 'info.json'));
  }, 10 * 60_000);

  it('7. a link in the middle of an output path is never followed: the sample is an error naming it, nothing from outside is copied', () => {
    expect(info.samples.map((s) => [s.task_id, s.status])).toEqual([
      ['first', 'ok'],
      ['second', 'ok'],
      ['linked', 'error'],
    ]);
    expect(sample(2).error?.message).toContain('link/sub: link is a symbolic link (not followed)');
    expect(sample(2).results).toEqual([]);
    expect(existsSync(join(run, info.samples[2]!.path, 'results'))).toBe(false);
  });

  it('9. a declared output directory the agent never made is a warning on an ok sample', async () => {
    expect(sample(0).status).toBe('ok');
    expect((sample(0).runtime as Json).warnings).toEqual(["the task declares the output directory 'never-made', but the agent never made it: nothing of it is in results/"]);
    expect((await roller(['validate-run', run])).code).toBe(0);
  });

  it('13. reprocess checks each archive against its published hashes: one byte changed is an error row; --no-verify is recorded', async () => {
    const damaged = join(tmp.path, 'damaged-archive');
    cpSync(run, damaged, { recursive: true });
    const firstCalls = join(damaged, info.samples[0]!.path, 'capture', 'attempt-0001', 'calls.jsonl');
    const text = readFileSync(firstCalls, 'utf8');
    const flipped = text.replace(/"output":(\d)/, (_m, d: string) => `"output":${(Number(d) + 1) % 10}`);
    expect(flipped).not.toBe(text); // still valid JSON, one digit different
    writeFileSync(firstCalls, flipped);
    const reprocessed = await roller(['reprocess', damaged, '--output', join(tmp.path, 'reprocessed')]);
    expect(reprocessed.code).toBe(1);
    expect(reprocessed.stderr).toContain('1 errors');
    const log = readFileSync(join(tmp.path, 'reprocessed', 'reprocess.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const failed = log.find((l) => l.state === 'failed')!;
    expect(failed.sample).toBe(info.samples[0]!.path);
    expect(failed.error.code).toBe('ROLLER_HASH_MISMATCH');
    expect(failed.error.message).toContain('calls.jsonl: sha256');
    expect(failed.error.message).toContain('pass --no-verify to use it as it is');
    const unverified = await roller(['reprocess', damaged, '--output', join(tmp.path, 'reprocessed-unverified'), '--no-verify']);
    const uLog = readFileSync(join(tmp.path, 'reprocessed-unverified', 'reprocess.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(uLog.length, unverified.stderr).toBeGreaterThan(0);
    expect(uLog.every((l) => l.verified === false)).toBe(true);
  });

  it('14. export: a damaged ACTF and a missing one are failed rows, the other samples are exported, no partial output, exit 1', async () => {
    const broken = join(tmp.path, 'broken-run');
    cpSync(run, broken, { recursive: true });
    writeFileSync(join(broken, info.samples[0]!.path, 'trace_ACTF.json'), '{"schema_version": "ACTF-1.0", "steps": [');
    rmSync(join(broken, info.samples[1]!.path, 'trace_ACTF.json'));
    const exported = await roller(['export', broken, '--output', join(tmp.path, 'atif')]);
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain(`roller export: ${info.samples[0]!.path}: not exported: ${join(broken, info.samples[0]!.path, 'trace_ACTF.json')} is not valid JSON`);
    expect(exported.stderr).toContain(`roller export: ${info.samples[1]!.path}: not exported: ${join(broken, info.samples[1]!.path, 'trace_ACTF.json')} is missing`);
    expect(exported.stderr).toContain('1 trajectories, 0 skipped, 2 failed');
    noStackTrace(exported);
    const left = readdirSync(join(tmp.path, 'atif'), { recursive: true }).map(String);
    expect(left.filter((p) => p.endsWith('trajectory.json'))).toEqual([join(info.samples[2]!.path.split('/').slice(-2).join('/'), 'trajectory.json')]);
    expect(left.some((p) => p.includes('.partial'))).toBe(false);
  });
});

describe('collect: an interrupted run', () => {
  it('5. validate-run says an interrupted run is unfinished and how to resume it', async () => {
    const out = join(tmp.path, 'runs');
    const tasks = tasksFile('interrupt.jsonl', [
      { id: 'one', prompt: '[HELLO] one' },
      { id: 'two', prompt: '[HELLO] two' },
    ]);
    let sent = false;
    await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'stopped'], {
      onStderr: (text, child) => {
        if (!sent && text.includes('started 0_one')) {
          sent = true;
          child.kill('SIGINT');
        }
      },
    });
    const run = join(out, 'stopped');
    expect(readJson<RunInfo>(join(run, 'info.json')).state).toBe('interrupted');
    const v = await roller(['validate-run', run]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain('info.json: the run is unfinished: it was interrupted (Ctrl-C or SIGTERM) with 1 of 2 samples processed; resume it with: roller collect');
    expect(v.stderr).not.toContain('ok ');
  }, 5 * 60_000);
});

describe('collect: an upstream that goes away after the preflight', () => {
  it('10. the sample says the model API could not be reached, not only that the harness ran past its time', async () => {
    // Answers the preflight, then stops listening: every call of the harness is refused.
    const flaky = createServer((_req, res) => {
      res.end();
      flaky.close();
    });
    flaky.listen(0, '127.0.0.1');
    await once(flaky, 'listening');
    const port = (flaky.address() as AddressInfo).port;
    const config = join(tmp.path, 'flaky-model.json');
    writeFileSync(config, JSON.stringify({ models: { 'acme/flaky': { api_base: `http://127.0.0.1:${port}`, api_key_env: 'ACME_KEY' } } }));
    const out = join(tmp.path, 'flaky-runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasksFile('flaky.jsonl', [{ id: 'hello', prompt: '[HELLO]' }]), '--harness', 'claude-code', '--model', 'acme/flaky', '--model-config', config, '--output', out, '--run-name', 'flaky', '--timeout', '30'], { env: { ...process.env, ACME_KEY: 'k-test' } });
    expect(r.code).toBe(1);
    const info = readJson<RunInfo>(join(out, 'flaky', 'info.json'));
    expect(info.samples[0]!.error?.message).toContain(`the model API could not be reached: connecting to http://127.0.0.1:${port} failed`);
  }, 5 * 60_000);
});

describe('collect: a task output that does not fit (a real full disk)', () => {
  it('B16.1: the failed copy is a sample error naming the file and why; the other files, the trace and the capture are kept', async (ctx) => {
    if (process.getuid?.() !== 0) {
      console.log('skipped: mounting a small tmpfs as the run output needs root');
      ctx.skip();
    }
    // The run's output on a 3 MiB tmpfs; the agent's work dir is elsewhere (the system temp dir), so its 5 MiB file fits there.
    const out = join(tmp.path, 'full-disk');
    mkdirSync(out, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', out]);
    mounts.push(out);
    const tasks = tasksFile('full-disk.jsonl', [{ id: 'big', prompt: '[HELLO] hi', files: { 'out/a-big.bin': 'x'.repeat(5 << 20), 'out/small.txt': 'small' }, output_dirs: ['out'] }]);
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'full']);
    expect(r.code, r.stderr).toBe(1);
    noStackTrace(r);
    const run = join(out, 'full');
    const info = readJson<RunInfo>(join(run, 'info.json'));
    const dir = join(run, info.samples[0]!.path);
    const sample = readJson<SampleInfo>(join(dir, 'info.json'));
    expect(sample.status).toBe('error');
    expect(sample.error?.code).toBe('ROLLER_RESULTS_COPY_FAILED');
    expect(sample.error?.message).toMatch(/copying the task output failed: out\/a-big\.bin: ENOSPC .*the other files were copied; free space/);
    // The file that fitted is there and recorded; no partial copy of the one that did not.
    expect(sample.results.map((f) => f.path)).toEqual(['out/small.txt']);
    expect(readdirSync(join(dir, 'results', 'out'))).toEqual(['small.txt']);
    for (const f of ['trace.jsonl', 'trace_ACTF.json', 'capture/attempt-0001/calls.jsonl']) expect(existsSync(join(dir, f)), f).toBe(true);
    expect(info.samples[0]!.status).toBe('error');
  }, 5 * 60_000);
});

describe('collect: the output disk fails mid-run (a real ext4 gone read-only, a real full tmpfs)', () => {
  const twoTasks = () => tasksFile('mid-run.jsonl', [{ id: 'a', prompt: '[SLEEP] wait' }, { id: 'b', prompt: '[HELLO] x' }]);
  const args = (out: string, name: string) => ['collect', '--capture-calls', '--tasks', twoTasks(), '--harness', 'claude-code', '--output', out, '--run-name', name];

  it('EROFS mid-sample (ext4 errors=remount-ro, a filesystem error triggered): exit 74, the lock named as staying, and --resume after fsck finishes the run', async (ctx) => {
    if (process.getuid?.() !== 0) {
      console.log('skipped: a loop-mounted ext4 needs root');
      ctx.skip();
    }
    const img = join(tmp.path, 'ro.img');
    const out = join(tmp.path, 'ro-disk');
    mkdirSync(out, { recursive: true });
    execFileSync('truncate', ['-s', '64M', img]);
    execFileSync('mkfs.ext4', ['-q', img]);
    const mount = () => execFileSync('mount', ['-o', 'loop,errors=remount-ro', img, out]);
    mount();
    mounts.push(out);
    const device = execFileSync('findmnt', ['-no', 'SOURCE', out], { encoding: 'utf8' }).trim().split('/').pop()!;
    // The filesystem fails while the first sample's tool sleeps: the kernel turns it read-only under the run.
    const failing = roller(args(out, 'run'));
    const run = join(out, 'run');
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(run, '.running', '0.json')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(`/sys/fs/ext4/${device}/trigger_fs_error`, '1');
    const r = await failing;
    expect(r.code, r.stderr).toBe(74);
    noStackTrace(r);
    expect(r.stderr).toMatch(/the filesystem is read-only \(EROFS/);
    expect(r.stderr).toContain(`the run's lock ${join(run, '.roller.lock')} stays (removing it failed: EROFS); once the filesystem is writable again, roller collect --resume takes it over`);
    // Repaired and mounted again: the resume takes the dead run's lock over and ends the run whole.
    execFileSync('umount', [out]);
    execFileSync('sh', ['-c', `e2fsck -fy ${img} >/dev/null 2>&1 || [ $? -le 1 ]`]);
    mount();
    const resumed = await roller([...args(out, 'run'), '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readJson<RunInfo>(join(run, 'info.json')).samples.map((x) => x.status)).toEqual(['ok', 'ok']);
    expect(readdirSync(run).sort()).toEqual(['info.json', 'lock.json', 'samples', 'sft.jsonl']);
  }, 5 * 60_000);

  it('ENOSPC mid-run (the capture does not fit a 150 KiB tmpfs): exit 74 saying the disk is full; grown, --resume finishes with nothing left over', async (ctx) => {
    if (process.getuid?.() !== 0) {
      console.log('skipped: mounting a small tmpfs as the run output needs root');
      ctx.skip();
    }
    const out = join(tmp.path, 'tiny-disk');
    mkdirSync(out, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=150k', 'tmpfs', out]);
    mounts.push(out);
    // Two quick tasks: the capture of the first does not fit.
    const quick = tasksFile('tiny-disk.jsonl', [{ id: 'a', prompt: '[HELLO] x' }, { id: 'b', prompt: '[HELLO] y' }]);
    const quickArgs = ['collect', '--capture-calls', '--tasks', quick, '--harness', 'claude-code', '--output', out, '--run-name', 'run'];
    const r = await roller(quickArgs);
    expect(r.code, r.stderr).toBe(74);
    noStackTrace(r);
    expect(r.stderr).toMatch(/^roller: the disk is full \(ENOSPC/m);
    expect(r.stderr).toMatch(/run resumes with --resume/);
    execFileSync('mount', ['-o', 'remount,size=64m', out]);
    const resumed = await roller([...quickArgs, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const run = join(out, 'run');
    expect(readJson<RunInfo>(join(run, 'info.json')).samples.map((x) => x.status)).toEqual(['ok', 'ok']);
    // The dead run's temporary files (sft.jsonl.PID.tmp, .running/) are gone.
    expect(readdirSync(run).sort()).toEqual(['info.json', 'lock.json', 'samples', 'sft.jsonl']);
  }, 5 * 60_000);
});

describe('collect: prompts of any size reach the harness (stdin or a file, never argv)', () => {
  it('8. a 300 KB prompt runs through Claude Code; NUL bytes and odd files keys are refused when the tasks load', async () => {
    const prompt = `[HELLO] ${'context line of a long task description. '.repeat(7500)}END`;
    expect(Buffer.byteLength(prompt)).toBeGreaterThan(300_000);
    const out = join(tmp.path, 'big-runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasksFile('big.jsonl', [{ id: 'big', prompt }]), '--harness', 'claude-code', '--output', out, '--run-name', 'big']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'big');
    const info = readJson<RunInfo>(join(run, 'info.json'));
    const actf = readJson(join(run, info.samples[0]!.path, 'trace_ACTF.json'));
    expect(JSON.stringify(actf.steps[0].user_content)).toContain(prompt.slice(-200));
    const bad = tasksFile('bad-keys.jsonl', [
      { id: 'nul', prompt: 'a\u0000b' },
      { id: 'empty', prompt: 'p', files: { '': 'x' } },
      { id: 'slash', prompt: 'p', files: { 'dir/': 'x' } },
      { id: 'both', prompt: 'p', files: { a: 'file', 'a/b': 'under a file' } },
    ]);
    const refused = await roller(['collect', '--capture-calls', '--tasks', bad, '--harness', 'claude-code', '--output', out, '--run-name', 'bad']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${bad}:1: $.prompt: holds a NUL byte`);
    expect(refused.stderr).toContain(`${bad}:2: $.files[""]: an empty file name`);
    expect(refused.stderr).toContain(`${bad}:3: $.files["dir/"]: 'dir/' ends with '/'`);
    expect(refused.stderr).toContain(`${bad}:4: $.files["a/b"]: 'a' is also given as a file`);
    expect(existsSync(join(out, 'bad'))).toBe(false);
  }, 5 * 60_000);

  it('8. a 10 MB prompt reaches Pi whole (its own CLI sets no limit)', async () => {
    const prompt = `[HELLO] ${'x'.repeat(10 << 20)} END`;
    const out = join(tmp.path, 'huge-runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasksFile('huge.jsonl', [{ id: 'huge', prompt }]), '--harness', 'pi', '--output', out, '--run-name', 'huge', '--capture-debug', 'full']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'huge');
    const info = readJson<RunInfo>(join(run, 'info.json'));
    const calls = readFileSync(join(run, info.samples[0]!.path, 'capture', 'attempt-0001', 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const user = (calls[0]!.context.messages as Json[]).find((m) => m.role === 'user')!;
    const text = typeof user.content === 'string' ? user.content : (user.content as Json[]).map((c) => c.text).join('');
    expect(text).toBe(prompt);
  }, 10 * 60_000);
});

describe('collect: credentials are locked by name, never by value (seeds/003 lock)', () => {
  it('B9.2: a resume with another key value for the same variable is no mismatch; neither value reaches a file', async () => {
    const { startScriptedModel } = await import('../../src/sources/scripted-model/index.js');
    const model = await startScriptedModel();
    try {
      const config = join(tmp.path, 'keyed-model.json');
      writeFileSync(config, JSON.stringify({ models: { 'acme/keyed': { api_base: model.url, api_key_env: 'ACME_KEY' } } }));
      const out = join(tmp.path, 'keyed-runs');
      const args = ['collect', '--capture-calls', '--tasks', tasksFile('keyed.jsonl', [{ id: 'hello', prompt: '[HELLO]' }]), '--harness', 'claude-code', '--model', 'acme/keyed', '--model-config', config, '--output', out, '--run-name', 'keyed'];
      const [one, two] = ['acme-key-value-one-7f3a9c', 'acme-key-value-two-51d2e8'];
      const first = await roller(args, { env: { ...process.env, ACME_KEY: one } });
      expect(first.code, first.stderr).toBe(0);
      const resumed = await roller([...args, '--resume'], { env: { ...process.env, ACME_KEY: two } });
      expect(resumed.code, resumed.stderr).toBe(0);
      const info = readJson<RunInfo>(join(out, 'keyed', 'info.json'));
      expect(info.summary).toMatchObject({ skipped: 1 });
      expect(readFileSync(join(out, 'keyed', 'lock.json'), 'utf8')).toContain('ACME_KEY');
      const files = (function walk(d: string): string[] {
        return readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
      })(join(out, 'keyed'));
      for (const f of files) {
        const bytes = readFileSync(f, 'latin1');
        expect(bytes.includes(one) || bytes.includes(two), f).toBe(false);
      }
    } finally {
      await model.close();
    }
  }, 5 * 60_000);
});
