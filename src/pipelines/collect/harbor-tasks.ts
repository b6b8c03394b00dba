import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { parse as parseToml } from 'smol-toml';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { parseSize } from '../../core/sizes.js';
import { Task } from '../../schemas/task.js';
import { checkValue } from '../../schemas/validate.js';
import { formatJsonPath } from '../../core/json-locate.js';
import type { TaskBundle } from './tasks.js';

/** The verifier's command, as Harbor runs it: the task's tests/ is at /tests only while it runs. */
export const HARBOR_VERIFIER = 'bash /tests/test.sh';

/** A directory holding task.toml (one Harbor task), or directories that do (a dataset). */
export async function isHarborTasks(path: string): Promise<boolean> {
  const st = await lstat(path.replace(/^harbor:/, '')).catch(() => null);
  return path.startsWith('harbor:') || st?.isDirectory() === true;
}

/**
 * Harbor task directories as roller tasks (Terminal-Bench 2, SWE-style sets): instruction.md the prompt,
 * environment/Dockerfile the image, tests/test.sh the verifier (its reward.txt or reward.json the grade), [agent]
 * and [verifier] timeouts, [environment] resources. Every file of every task is in the bundle's digest.
 */
export async function loadHarborTasks(spec: string): Promise<TaskBundle> {
  const root = resolve(spec.replace(/^harbor:/, ''));
  const dirs = (await isTaskDir(root)) ? [root] : await taskDirsIn(root);
  if (dirs.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${root} holds no Harbor task: a task is a directory with task.toml, instruction.md, environment/Dockerfile and tests/test.sh`);
  const tasks: Task[] = [];
  const problems: string[] = [];
  const lines = new Map<string, number>();
  for (const [i, dir] of dirs.entries()) {
    try {
      const task = await harborTask(dir);
      if (lines.has(task.id)) problems.push(`${dir}: task id '${task.id}' is used twice`);
      lines.set(task.id, i + 1);
      tasks.push(task);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the Harbor tasks have errors; nothing was run:\n${problems.join('\n')}`);
  const digest = `sha256:${createHash('sha256').update(tasks.map((t) => stableStringify(t)).join('\n')).digest('hex')}`;
  return { path: root, lines, tasks, digest };
}

async function isTaskDir(dir: string): Promise<boolean> {
  return (await lstat(join(dir, 'task.toml')).catch(() => null))?.isFile() === true;
}

async function taskDirsIn(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch((err: Error) => {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `--tasks ${root}: ${err.message}; pass a tasks JSONL file or a Harbor task directory`);
  });
  const dirs: string[] = [];
  for (const e of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    if (await isTaskDir(join(root, e.name))) dirs.push(join(root, e.name));
  }
  return dirs;
}

type Table = Record<string, unknown>;

async function harborTask(dir: string): Promise<Task> {
  const where = (file: string) => join(dir, file);
  let toml: Table;
  try {
    toml = parseToml(await readFile(where('task.toml'), 'utf8')) as Table;
  } catch (err) {
    throw new Error(`${where('task.toml')}: ${(err as Error).message.split('\n')[0]}`);
  }
  const instruction = await readFile(where('instruction.md'), 'utf8').catch(() => {
    throw new Error(`${where('instruction.md')}: missing (the task's prompt)`);
  });
  for (const needed of ['tests/test.sh', 'environment/Dockerfile']) {
    if (!(await lstat(where(needed)).catch(() => null))?.isFile()) throw new Error(`${where(needed)}: missing (a Harbor task needs it)`);
  }
  const table = (name: string): Table => (toml[name] && typeof toml[name] === 'object' ? (toml[name] as Table) : {});
  const environment = table('environment');
  const verifier = table('verifier');
  const seconds = (t: Table, what: string): number | undefined => {
    const v = t.timeout_sec;
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !(v > 0)) throw new Error(`${where('task.toml')}: ${what}.timeout_sec must be a number of seconds above 0`);
    return v;
  };
  const strings = (t: unknown, what: string): Record<string, string> | undefined => {
    if (t === undefined) return undefined;
    if (!t || typeof t !== 'object' || Object.values(t).some((v) => typeof v !== 'string')) throw new Error(`${where('task.toml')}: ${what} must be a table of strings`);
    return Object.keys(t).length > 0 ? (t as Record<string, string>) : undefined;
  };
  for (const key of ['memory_mb', 'cpus'] as const) {
    if (environment[key] !== undefined && !(typeof environment[key] === 'number' && environment[key] > 0)) throw new Error(`${where('task.toml')}: [environment] ${key} must be a number above 0`);
  }
  const buildNetwork = environment.build_network;
  if (buildNetwork !== undefined && buildNetwork !== 'host' && buildNetwork !== 'none') throw new Error(`${where('task.toml')}: [environment] build_network must be "none" (the default) or "host"`);
  const memory = environment.memory_mb !== undefined ? Number(environment.memory_mb) * 2 ** 20 : typeof environment.memory === 'string' ? parseSize(environment.memory, `${where('task.toml')}: [environment] memory`) : undefined;
  const agentTimeout = seconds(table('agent'), '[agent]');
  const verifierTimeout = seconds(verifier, '[verifier]');
  const verifierEnv = strings(verifier.env, '[verifier.env]');
  const agentEnv = strings(environment.env, '[environment.env]');
  const value = {
    id: dir.split('/').pop()!,
    prompt: instruction,
    ...(agentTimeout ? { timeout_s: agentTimeout } : {}),
    grader: { command: HARBOR_VERIFIER, ...(verifierTimeout ? { timeout_s: verifierTimeout } : {}), ...(verifierEnv ? { env: verifierEnv } : {}) },
    harbor: {
      dir,
      digest: await treeDigest(dir),
      environment_digest: await treeDigest(where('environment')),
      ...(typeof environment.docker_image === 'string' ? { docker_image: environment.docker_image } : {}),
      ...(typeof environment.cpus === 'number' && environment.cpus > 0 ? { cpus: environment.cpus } : {}),
      ...(memory && Number.isFinite(memory) && memory > 0 ? { memory_bytes: Math.round(memory) } : {}),
      ...(agentEnv ? { env: agentEnv } : {}),
      ...(buildNetwork === 'host' ? { build_network: 'host' as const } : {}),
    },
    ...(toml.metadata && typeof toml.metadata === 'object' ? { metadata: toml.metadata as Record<string, unknown> } : {}),
  };
  const issues = checkValue(Task, value);
  if (issues.length > 0) throw new Error(`${dir}: ${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')}`);
  return Task.parse(value);
}

/**
 * sha256 over every file under dir (its path, its mode's executable bit, its bytes) in path order; a link is its
 * target's text, never followed. A changed byte, name or permission is a changed digest.
 */
export async function treeDigest(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const entries = (await readdir(dir, { recursive: true, withFileTypes: true })).map((e) => join(e.parentPath, e.name)).sort();
  for (const path of entries) {
    const st = await lstat(path);
    const rel = relative(dir, path);
    if (st.isDirectory()) continue;
    if (st.isSymbolicLink()) hash.update(`link\0${rel}\0${await readlink(path)}\0`);
    else if (st.isFile()) hash.update(`file\0${rel}\0${st.mode & 0o111 ? 'x' : '-'}\0${st.size}\0`).update(await readFile(path));
  }
  return `sha256:${hash.digest('hex')}`;
}
