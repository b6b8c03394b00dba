import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessOutcome, ProcessPlan, RunProcessOptions } from '../../sources/process-runner.js';
import { isolatedHomeEnv } from '../../harnesses/launch.js';
import type { Grade } from '../../schemas/run-info.js';
import type { Task } from '../../schemas/task.js';

/** Where a sample keeps its grader's output: stdout.log and stderr.log (its scores go into info.json). */
import { GRADER_DIR } from '../sample-layout.js';

export { GRADER_DIR };

/** The grader's reward files, in the attempt's HOME (a Harbor verifier sees it as /logs/verifier). */
export const GRADER_SCRATCH = '.roller-grader';

/** How a process is run where the harness ran (locally, or in its container). */
export type RunIn = (plan: ProcessPlan, options: RunProcessOptions) => Promise<ProcessOutcome>;

/**
 * The task's grader (bench scores, seeds/003 ATIF extra.roller): its shell command run in the work directory the
 * harness left, after the last prompt, with nothing of roller's environment but PATH (no credential reaches it).
 * Exit 0 is `passed`, another code `failed`. Scores as Harbor's verifiers leave them: `reward.txt` (one number,
 * the score `reward`) or `reward.json` (an object of numbers) in $ROLLER_GRADER_DIR. A grade says how the
 * agent did; it never changes the sample's status.
 */
export async function runGrader(grader: NonNullable<Task['grader']>, where: { work: string; home: string; sampleDir: string; defaultTimeoutS: number; run: RunIn }): Promise<Grade> {
  const out = join(where.sampleDir, GRADER_DIR);
  // The reward files go to the attempt's HOME: mounted into a container like the work dir, and never published as they are.
  const scratch = join(where.home, GRADER_SCRATCH);
  await mkdir(out, { recursive: true });
  await mkdir(scratch, { recursive: true });
  const timeoutS = grader.timeout_s ?? where.defaultTimeoutS;
  const plan: ProcessPlan = {
    command: 'sh',
    args: ['-c', grader.command],
    cwd: where.work,
    env: { ...grader.env, ...isolatedHomeEnv(where.home), ROLLER_GRADER_DIR: scratch, ROLLER_WORK_DIR: where.work },
  };
  let outcome: ProcessOutcome;
  try {
    outcome = await where.run(plan, { timeoutMs: timeoutS * 1000, stdoutPath: join(out, 'stdout.log'), stderrPath: join(out, 'stderr.log') });
  } catch (err) {
    return { status: 'error', exit_code: null, scores: {}, elapsed_ms: 0, reason: `the grader could not be started: ${(err as Error).message}` };
  }
  const base = { exit_code: outcome.exitCode, elapsed_ms: outcome.durationMs };
  if (outcome.timedOut) return { ...base, status: 'timeout', scores: {}, reason: `the grader ran past ${timeoutS} s and was stopped` };
  const scores = await readScores(scratch);
  if (typeof scores === 'string') return { ...base, status: 'error', scores: {}, reason: scores };
  if (outcome.exitCode === null) return { ...base, status: 'error', scores, reason: `the grader was killed by ${outcome.signal}` };
  return { ...base, status: outcome.exitCode === 0 ? 'passed' : 'failed', scores, reason: outcome.exitCode === 0 ? null : `the grader exited ${outcome.exitCode} (see ${GRADER_DIR}/stderr.log)` };
}

/** A reward file the grader wrote, read without following a link and only up to 1 MiB; undefined when absent. */
async function readReward(path: string): Promise<string | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new Error(`${path.split('/').pop()} cannot be read (${err.code === 'ELOOP' ? 'a symbolic link, not followed' : err.code})`);
  });
  if (!handle) return undefined;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${path.split('/').pop()} is not a regular file`);
    if (st.size > 1 << 20) throw new Error(`${path.split('/').pop()} is ${st.size} bytes; scores fit in 1 MiB`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** reward.json, else reward.txt, else no scores; a file that says something else is named with what is wrong. */
async function readScores(dir: string): Promise<Record<string, number> | string> {
  let json: string | undefined;
  let txt: string | undefined;
  try {
    json = await readReward(join(dir, 'reward.json'));
    txt = json === undefined ? await readReward(join(dir, 'reward.txt')) : undefined;
  } catch (err) {
    return `$ROLLER_GRADER_DIR/${(err as Error).message}`;
  }
  if (json !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return `$ROLLER_GRADER_DIR/reward.json is not JSON; write an object of numbers, e.g. {"reward": 1}`;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return `$ROLLER_GRADER_DIR/reward.json holds ${Array.isArray(value) ? 'an array' : typeof value}, not an object of numbers`;
    const bad = Object.entries(value).filter(([, v]) => typeof v !== 'number' || !Number.isFinite(v));
    if (bad.length > 0) return `$ROLLER_GRADER_DIR/reward.json: ${bad.map(([k]) => `'${k}'`).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not a finite number`;
    return value as Record<string, number>;
  }
  if (txt === undefined) return {};
  const n = txt.trim() === '' ? NaN : Number(txt.trim());
  return Number.isFinite(n) ? { reward: n } : `$ROLLER_GRADER_DIR/reward.txt holds '${txt.trim().slice(0, 40)}', not a number`;
}
