import { lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Grade } from '../schemas/run-info.js';
import type { Task } from '../schemas/task.js';
import { seedWorkDir } from '../sources/docker-images.js';
import { runInDocker } from '../sources/docker-runner.js';
import { containerFor, dockerPlan, prepareTaskImages, verifierMounts, workMounts, type DockerPlan, type DockerRequest } from './collect/docker-plan.js';
import { runGrader } from './collect/grader.js';
import { loadHarborTasks } from './collect/harbor-tasks.js';

/** One Harbor task checked by its own solution: did solve.sh run, and what did the verifier say of its work. */
export interface OracleResult {
  task: string;
  status: 'passed' | 'failed' | 'no_solution' | 'solution_failed' | 'error';
  /** The verifier's verdict on the solution's work (absent: it did not run). */
  grade?: Grade;
  reason: string | null;
}

/**
 * `roller oracle`: each Harbor task's `solution/solve.sh` run in the task's image where an agent would work, then its
 * verifier, as collect runs them, with no model and no network. A task whose own solution does not pass is broken:
 * found before model calls are spent on it.
 */
export async function checkHarborSolutions(tasksDir: string, options: { docker?: DockerRequest; onResult?: (r: OracleResult) => void; onNotice?: (m: string) => void } = {}): Promise<OracleResult[]> {
  const bundle = await loadHarborTasks(tasksDir);
  const plan = await prepareTaskImages(await dockerPlan(options.docker ?? {}), bundle.tasks, options.onNotice);
  const results: OracleResult[] = [];
  for (const task of bundle.tasks) {
    const result = await checkOne(plan, task).catch((err: unknown): OracleResult => ({ task: task.id, status: 'error', reason: (err as Error).message }));
    results.push(result);
    options.onResult?.(result);
  }
  return results;
}

async function checkOne(plan: DockerPlan, task: Task): Promise<OracleResult> {
  const harbor = task.harbor!;
  const solution = join(harbor.dir, 'solution');
  if (!(await lstat(join(solution, 'solve.sh')).catch(() => null))?.isFile()) return { task: task.id, status: 'no_solution', reason: `${join(solution, 'solve.sh')} is missing` };
  const root = await mkdtemp(join(tmpdir(), `roller-oracle-${task.id}-`));
  try {
    const home = join(root, 'home');
    const work = join(root, 'work');
    await mkdir(home, { recursive: true });
    await mkdir(work, { recursive: true });
    const { container, workdir, env } = containerFor(plan, task);
    const image = plan.taskImages.get(task.id)!;
    if (workdir) await seedWorkDir(plan.api, plan.container, image, work, root);
    const mounts = workMounts(home, work, workdir);
    const solved = await runInDocker(
      { command: 'bash', args: ['/solution/solve.sh'], cwd: workdir ?? work, env: { HOME: home, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } },
      { container: { ...container, network: 'none' }, docker: plan.api, env, mounts: [...mounts, { path: solution, target: '/solution', readOnly: true }], timeoutMs: (task.timeout_s ?? 600) * 1000, stdoutPath: join(root, 'solve-stdout.log'), stderrPath: join(root, 'solve-stderr.log') },
    );
    if (solved.timedOut || solved.exitCode !== 0) {
      return { task: task.id, status: 'solution_failed', reason: solved.timedOut ? `solve.sh ran past ${task.timeout_s ?? 600} s` : `solve.sh exited ${solved.exitCode ?? solved.signal}` };
    }
    const grade = await runGrader(task.grader!, {
      work,
      home,
      sampleDir: root,
      defaultTimeoutS: task.timeout_s ?? 600,
      run: (p, run) =>
        runInDocker(p, { ...run, container: { ...container, network: 'none' }, docker: plan.api, env, mounts: [...mounts, ...verifierMounts(task, home)] }),
    });
    return { task: task.id, status: grade.status === 'passed' ? 'passed' : grade.status === 'failed' ? 'failed' : 'error', grade, reason: grade.reason };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** The run's verdict: every task solved by its own solution. */
export function oracleFailures(results: readonly OracleResult[]): OracleResult[] {
  return results.filter((r) => r.status !== 'passed');
}

