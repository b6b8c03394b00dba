/**
 * `roller collect --queue` and `roller worker` on a real Redis (started by the test, with a password) through the real
 * Claude Code CLI on the scripted model: three workers, one killed with SIGKILL mid-sample — BullMQ's stalled-job check
 * hands its sample to another, and the run is complete, valid and the one-process run (but times and what the CLI draws
 * at random). A worker that would collect under another lock refuses the job, and the run says which sample and why;
 * an unreachable Redis is a clear error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectRuns, filesUnder, info, roller, type Ran } from '../support/collect-run.js';
import { comparableRun } from '../support/comparable-run.js';
import { repoRoot, rollerBin } from '../support/paths.js';
import { startUpstream } from '../support/http.js';
import { startTestRedis } from '../support/redis-server.js';
import { sh } from '../support/sh.js';
import { runDifferences, runFiles } from '../support/run-equality.js';
import { filesHolding } from '../support/files-holding.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

const PASSWORD = 'queue-test-password-4f1c';
const redis = startTestRedis(PASSWORD);
const tmp = useTempDir('queue');
// The queue's shared secret: the coordinator signs each job with it, workers run only what it signed (every roller
// process this file starts inherits it).
const SECRET = randomBytes(32).toString('hex');
process.env.ROLLER_QUEUE_SECRET = SECRET;
/** A worker's arguments: the queue, and the only directory it takes runs from. */
const workerArgs = (url: string, name: string, ...more: string[]) => ['worker', '--queue', url, '--queue-name', name, '--runs-root', tmp.path, ...more];
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
    // The model's API base and key variable are on each worker's allow-list: a run naming others is refused.
    const allowed = ['--allow-api-base', provider.url, '--allow-key-env', 'ROLLER_E2E_API_KEY'];
    const workers = [1, 2, 3].map(() => start(workerArgs(bare, 'kill-test', '--lock', '3', '--until-empty', ...allowed), { ...provider.env, ROLLER_REDIS_PASSWORD: PASSWORD }));
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
    const worker = start(workerArgs(url, 'coordinator-kill', '--lock', '3', '--until-empty'));
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
    const worker = await roller(workerArgs(url, 'lock-test', '--until-empty', '--lock', '3'));
    expect(worker.code).toBe(1);
    expect(worker.stderr).toMatch(/failed 0_greet[\s\S]*under other conditions than its lock[\s\S]*task_bundle_digest/);
    const c = await coordinator.done;
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/sample 0 \(greet, scripted\/default\) was not collected: its job failed on the worker[\s\S]*roller collect --resume --queue queues it again/);
    expect(info(join(out, 'r')).progress).toMatchObject({ total: 1, processed: 0, pending: 1 });
  }, 5 * 60_000);

  it("jobs anyone else wrote into the Redis are refused, nothing run: unsigned, signed with another secret, a run outside the worker's roots, an API the worker does not allow", async () => {
    // The attacker's server: where a hijacked worker would send its key.
    let hits = 0;
    const attacker = await startUpstream((_req, res) => void (hits++, res.end('{}')));
    const evilBase = `${attacker.url}/v1`;
    const marker = join(tmpdir(), `roller-pwned-${process.pid}`);
    // The attacker's run, outside the worker's root: its model sends the worker's key to the attacker; its grader runs a command.
    const evil = mkdtempSync(join(tmpdir(), 'roller-attacker-'));
    try {
      writeFileSync(join(evil, 'models.json'), JSON.stringify({ models: { 'evil/m': { api_base: evilBase, api_key_env: 'ROLLER_E2E_API_KEY' } } }));
      writeFileSync(join(evil, 'tasks.jsonl'), JSON.stringify({ id: 't', prompt: '[HELLO] hi', grader: { command: `touch ${marker}` } }));
      const evilSpec = { tasks: join(evil, 'tasks.jsonl'), harness: 'claude-code', models: ['evil/m'], modelConfig: join(evil, 'models.json') };
      writeFileSync(join(evil, 'queue.json'), JSON.stringify(evilSpec));
      // A run inside the root (a copy of the first test's) whose queue spec was changed to the attacker's model.
      const inside = join(tmp.path, 'hijacked', 'six');
      cpSync(join(tmp.path, 'queued', 'six'), inside, { recursive: true });
      writeFileSync(join(inside, 'queue.json'), JSON.stringify(evilSpec));
      const { Queue } = await import('bullmq');
      const { Redis } = await import('ioredis');
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      const queue = new Queue('hijack', { connection });
      const job = (runDir: string) => ({ run_dir: runDir, run_lock_digest: `sha256:${'0'.repeat(64)}`, index: 0, task_id: 't', model: 'evil/m' });
      const sign = (secret: string, data: ReturnType<typeof job>) => createHmac('sha256', secret).update(JSON.stringify({ index: data.index, model: data.model, queue: 'hijack', run_dir: data.run_dir, run_lock_digest: data.run_lock_digest, task_id: data.task_id })).digest('hex');
      await queue.add('sample', { ...job(evil), spec: evilSpec, signature: 'x'.repeat(64) }, { jobId: 'unsigned' });
      await queue.add('sample', { ...job(evil), signature: sign('another-secret-'.repeat(4), job(evil)) }, { jobId: 'other-secret' });
      await queue.add('sample', { ...job(evil), signature: sign(SECRET, job(evil)) }, { jobId: 'outside-root' });
      await queue.add('sample', { ...job(inside), signature: sign(SECRET, job(inside)) }, { jobId: 'not-allowed' });
      await queue.close();
      connection.disconnect();
      const w = await roller(workerArgs(url, 'hijack', '--until-empty', '--lock', '3'), { env: { ...process.env, ROLLER_E2E_API_KEY: provider.key } });
      expect(w.code).toBe(1);
      expect(w.stderr.match(/job (unsigned|other-secret) is not signed with this worker's ROLLER_QUEUE_SECRET for queue hijack: refused, nothing run/g)).toHaveLength(2);
      expect(w.stderr).toContain(`${evil} is not under this worker's --runs-root (${tmp.path}): refused, nothing run`);
      expect(w.stderr).toContain(`model evil/m calls ${evilBase}, which this worker does not allow: start it with --allow-api-base`);
      expect(w.stderr).toContain('4 failed');
      expect(hits).toBe(0); // the key went nowhere
      expect(existsSync(marker)).toBe(false); // no command ran
    } finally {
      await attacker.close();
      rmSync(evil, { recursive: true, force: true });
    }
  }, 5 * 60_000);

  it('a worker started with --until-empty before its collect queued anything waits for the samples, runs them, then leaves', async () => {
    const one = await tasksFile('early.jsonl', [{ id: 'greet', prompt: '[HELLO] hi' }]);
    const worker = start(workerArgs(url, 'early', '--until-empty', '--lock', '3'));
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the queue is empty all this while
    const c = await roller(['collect', '--tasks', one, '--harness', 'claude-code', '--output', join(tmp.path, 'early'), '--run-name', 'e', '--queue', url, '--queue-name', 'early']);
    expect(c.code, c.stderr).toBe(0);
    const w = await worker.done;
    expect([w.code, w.stderr]).toEqual([0, expect.stringContaining('ok 0_greet')]);
  }, 3 * 60_000);

  it('a Redis that goes away while a worker waits: one line saying so (no stack trace), not one per retry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'roller-redis-gone-'));
    const script = join(repoRoot, 'scripts', 'redis-server.sh');
    try {
      const own = sh([script, 'start', dir]).stdout.trim();
      const worker = start(workerArgs(own, 'gone'));
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(sh([script, 'stop', dir]).code).toBe(0);
      await worker.until(/queue: connect ECONNREFUSED/);
      await new Promise((resolve) => setTimeout(resolve, 4000)); // several of ioredis's retries
      worker.child.kill('SIGKILL');
      await worker.done;
      const lines = worker.stderr().trim().split('\n');
      expect(worker.stderr()).not.toMatch(/\n\s+at /);
      expect(lines.filter((l) => l.includes('ECONNREFUSED'))).toEqual([expect.stringMatching(/^roller worker: Redis at redis:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED .* \(retrying\)$/), expect.stringMatching(/^roller worker: queue: connect ECONNREFUSED/)]);
    } finally {
      sh([script, 'stop', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('an unreachable Redis is a clear error, at once, exit 69 (a service, not usage); the collect leaves no run behind', async () => {
    const r = await roller(['collect', ...base(), '--output', join(tmp.path, 'nowhere'), '--run-name', 'n', '--queue', 'redis://:secret@127.0.0.1:1']);
    expect(r.code, r.stderr).toBe(69);
    expect(r.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(r.stderr).not.toContain('secret');
    expect(existsSync(join(tmp.path, 'nowhere', 'n'))).toBe(false);
    const w = await roller(workerArgs('redis://:pw@127.0.0.1:1', 'roller', '--until-empty'));
    expect(w.code).toBe(69);
    expect(w.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    // A Redis without a password, or a queue without its shared secret: refused before anything is queued or run.
    const open = await roller(['collect', ...base(), '--output', join(tmp.path, 'open'), '--run-name', 'o', '--queue', 'redis://127.0.0.1:1']);
    expect([open.code, open.stderr]).toEqual([2, expect.stringContaining('has no password (nor is ROLLER_REDIS_PASSWORD set): anyone who reaches that Redis could read and write the queue')]);
    const openWorker = await roller(workerArgs('redis://127.0.0.1:1', 'roller', '--until-empty'));
    expect([openWorker.code, openWorker.stderr]).toEqual([2, expect.stringContaining('--redis-no-password')]);
    const { ROLLER_QUEUE_SECRET: _s, ...noSecret } = process.env;
    const unsigned = await roller(workerArgs(url, 'roller', '--until-empty'), { env: noSecret });
    expect([unsigned.code, unsigned.stderr]).toEqual([2, expect.stringContaining('ROLLER_QUEUE_SECRET is not set')]);
  }, 60_000);
});
