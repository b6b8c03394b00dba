/**
 * `roller collect --queue` and `roller worker` on a real Redis (started by the test, with a password) through the real
 * Claude Code CLI on the scripted model: three workers, one killed with SIGKILL mid-sample — BullMQ's stalled-job check
 * hands its sample to another, and the run is complete, valid and the one-process run (but times and what the CLI draws
 * at random). A worker that would collect under another lock refuses the job, and the run says which sample and why;
 * an unreachable Redis is a clear error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectRuns, filesUnder, info, roller, type Ran } from '../support/collect-run.js';
import { comparableRun } from '../support/comparable-run.js';
import { repoRoot, rollerBin } from '../support/paths.js';
import { startTestRedis } from '../support/redis-server.js';
import { runDifferences, runFiles } from '../support/run-equality.js';
import { filesHolding } from '../support/files-holding.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

const PASSWORD = 'queue-test-password-4f1c';
const redis = startTestRedis(PASSWORD);
const tmp = useTempDir('queue');
const { tasksFile } = collectRuns(tmp);
/** The first test's model: an API (the scripted model served with a key, which the coordinator and workers hold). */
const provider = useScriptedProvider(tmp);

/** A roller process left running, its stderr collected; `until` resolves when its stderr matches. */
function start(args: string[], env?: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string; until(re: RegExp): Promise<void>; done: Promise<Ran> } {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
  let stdout = '';
  let stderr = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of waiters.filter((x) => x.re.test(stderr))) w.resolve();
  });
  const done = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, stderr: () => stderr, until: (re) => (re.test(stderr) ? Promise.resolve() : new Promise((resolve) => waiters.push({ re, resolve }))), done };
}

describe.skipIf('reason' in redis)(`roller collect --queue and roller worker on a real Redis${'reason' in redis ? ` (skipped: ${redis.reason})` : ''}`, () => {
  const url = 'url' in redis ? redis.url : '';
  let tasks = '';
  const base = () => ['--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--capture-calls'];
  beforeAll(async () => {
    const demo = readFileSync(join(repoRoot, 'examples/tasks/demo.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    tasks = await tasksFile('six.jsonl', [0, 1].flatMap((copy) => demo.map((t) => ({ ...t, id: `${t.id}-${copy}` }))));
  });

  it('3 workers on an API model, one killed mid-sample: its sample runs again on another, and the run is the one-process run', async () => {
    const onApi = () => ['--tasks', tasks, '--harness', 'claude-code', '--model', 'api/claude-code', '--model-config', provider.models, '--capture-calls'];
    const one = await roller(['collect', ...onApi(), '--output', join(tmp.path, 'one'), '--run-name', 'six'], { env: provider.env });
    expect(one.code, one.stderr).toBe(0);

    const out = join(tmp.path, 'queued');
    const coordinator = start(['collect', ...onApi(), '--output', out, '--run-name', 'six', '--queue', url, '--queue-name', 'kill-test'], provider.env);
    await coordinator.until(/6 samples queued on Redis at redis:\/\/127\.0\.0\.1:/);
    // The workers take the password from the environment (ROLLER_REDIS_PASSWORD), off their command lines.
    const bare = url.replace(`:${PASSWORD}@`, '');
    // Each worker holds the model's key in its own environment (the job carries only the variable's name).
    const workers = [1, 2, 3].map(() => start(['worker', '--queue', bare, '--queue-name', 'kill-test', '--lock', '3', '--until-empty'], { ...provider.env, ROLLER_REDIS_PASSWORD: PASSWORD }));
    await workers[0]!.until(/started (\d+)_/);
    const killedIndex = /started (\d+)_/.exec(workers[0]!.stderr())![1]!;
    workers[0]!.child.kill('SIGKILL');
    const [c, , w2, w3] = await Promise.all([coordinator.done, workers[0]!.done, workers[1]!.done, workers[2]!.done]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(new RegExp(`sample ${killedIndex} \\([^)]+\\): its worker stopped answering; it runs again on another`));
    for (const w of [w2, w3]) expect(w.code, w.stderr).toBe(0);
    // Another worker ran the killed worker's sample to the end.
    expect(`${w2.stderr}${w3.stderr}`).toMatch(new RegExp(`ok ${killedIndex}_`));

    const run = join(out, 'six');
    expect((await roller(['validate-run', run])).code).toBe(0);
    expect(info(run).samples.map((s) => s.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    expect(existsSync(join(run, '.parts'))).toBe(false); // what the workers built samples in, the killed one's too
    const reference = join(tmp.path, 'one', 'six');
    const sampleFiles = (dir: string) => runFiles(dir).filter((f) => f.startsWith('samples/'));
    // The run's config says it was queued (the URL without its password): the one field a queued run adds.
    const queueWithoutPassword = `redis://127.0.0.1:${new URL(url).port}`;
    expect(info(run).config).toMatchObject({ queue: queueWithoutPassword, queue_name: 'kill-test' });
    const differences = runDifferences(reference, run, { harnessRandom: true, skip: [...sampleFiles(reference), ...sampleFiles(run)] });
    expect(differences).toEqual([`info.json.config.queue: undefined vs "${queueWithoutPassword}"`, 'info.json.config.queue_name: undefined vs "kill-test"']);
    expect(comparableRun(run)).toEqual(comparableRun(reference));
    // The Redis password and the model's key are in no file of the run.
    for (const f of filesUnder(run)) expect(readFileSync(f).includes(PASSWORD), f).toBe(false);
    expect(filesHolding(provider.key, [run])).toEqual([]);
  }, 12 * 60_000);

  it('the collect killed with SIGKILL mid-run: the workers go on; --resume reuses what they published and waits for the rest', async () => {
    const out = join(tmp.path, 'coordinator-killed');
    const args = ['collect', ...base(), '--output', out, '--run-name', 'six', '--queue', url, '--queue-name', 'coordinator-kill'];
    const coordinator = start(args);
    await coordinator.until(/6 samples queued/);
    const worker = start(['worker', '--queue', url, '--queue-name', 'coordinator-kill', '--lock', '3', '--until-empty']);
    await coordinator.until(/\[1\/6\] ok/);
    coordinator.child.kill('SIGKILL');
    await coordinator.done;
    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const w = await worker.done;
    expect(w.code, w.stderr).toBe(0);
    const run = join(out, 'six');
    const statuses = info(run).samples.map((s) => s.status);
    expect(statuses).toHaveLength(6);
    expect(statuses.filter((s) => s === 'skipped').length).toBeGreaterThanOrEqual(1); // published before the resume
    expect(statuses.every((s) => s === 'ok' || s === 'skipped')).toBe(true);
    expect(info(run).resume_history).toHaveLength(1);
    expect((await roller(['validate-run', run])).code).toBe(0);
  }, 5 * 60_000);

  it('a worker that would collect under another lock refuses the job; the run records that sample as not collected', async () => {
    const changing = await tasksFile('changing.jsonl', [{ id: 'greet', prompt: '[HELLO] hi' }]);
    const out = join(tmp.path, 'refused');
    const coordinator = start(['collect', '--tasks', changing, '--harness', 'claude-code', '--output', out, '--run-name', 'r', '--queue', url, '--queue-name', 'lock-test']);
    await coordinator.until(/1 samples queued/);
    // The task file changes after the run was locked: a worker planning the run now sees another task bundle.
    appendFileSync(changing, '\n{"id":"late","prompt":"[HELLO] late"}\n');
    const worker = await roller(['worker', '--queue', url, '--queue-name', 'lock-test', '--until-empty', '--lock', '3']);
    expect(worker.code).toBe(1);
    expect(worker.stderr).toMatch(/failed 0_greet[\s\S]*under other conditions than its lock[\s\S]*task_bundle_digest/);
    const c = await coordinator.done;
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/sample 0 \(greet, scripted\/default\) was not collected: its job failed on the worker[\s\S]*roller collect --resume --queue queues it again/);
    expect(info(join(out, 'r')).progress).toMatchObject({ total: 1, processed: 0, pending: 1 });
  }, 5 * 60_000);

  it('an unreachable Redis is a clear error, at once', async () => {
    const r = await roller(['collect', ...base(), '--output', join(tmp.path, 'nowhere'), '--run-name', 'n', '--queue', 'redis://:secret@127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(r.stderr).not.toContain('secret');
    const w = await roller(['worker', '--queue', 'redis://127.0.0.1:1', '--until-empty']);
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  }, 60_000);
});
