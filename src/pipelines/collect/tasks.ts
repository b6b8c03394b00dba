import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import stableStringify from 'fast-json-stable-stringify';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { Task } from '../../schemas/task.js';
import { checkValue } from '../../schemas/validate.js';

export interface TaskBundle {
  /** The file the tasks were read from, and the line of each task (by id): for errors found later. */
  path: string;
  lines: ReadonlyMap<string, number>;
  tasks: Task[];
  /** sha256 of the tasks in canonical JSON, in file order: resume refuses a changed bundle. */
  digest: string;
}

/**
 * A tasks JSONL file, every line checked before anything runs: a bad line is an error naming file and
 * line; duplicate ids are refused (an id names the sample's directory).
 */
export async function loadTasks(path: string): Promise<TaskBundle> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `tasks file ${path} cannot be read (${(err as Error).message}); pass --tasks with a JSONL file of {"id","prompt"} lines`);
  }
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      problems.push(`${path}:${i + 1}: not JSON (${(err as Error).message})`);
      return;
    }
    const issues = checkValue(Task, value);
    if (issues.length > 0) {
      for (const issue of issues) problems.push(`${path}:${i + 1}: ${formatJsonPath(issue.path)}: ${issue.message}`);
      return;
    }
    const task = Task.parse(value); // checked above; parsed for its defaults (user_simulator's max_turns and stop)
    if (seen.has(task.id)) problems.push(`${path}:${i + 1}: task id '${task.id}' is already used on line ${seen.get(task.id)}`);
    seen.set(task.id, i + 1);
    tasks.push(task);
  });
  if (problems.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the tasks file has errors; nothing was run:\n${problems.join('\n')}`);
  if (tasks.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${path} holds no tasks`);
  const digest = `sha256:${createHash('sha256').update(tasks.map((t) => stableStringify(t)).join('\n')).digest('hex')}`;
  return { path, lines: seen, tasks, digest };
}

/** Prompts over what the harness takes (its runner's maxPromptBytes) are refused before anything runs, each with its file and line. */
export function checkPromptSizes(harness: string, limit: number | undefined, bundle: TaskBundle): void {
  if (limit === undefined) return;
  const problems: string[] = [];
  for (const t of bundle.tasks) {
    for (const [k, text] of [t.prompt, ...(t.followups ?? [])].entries()) {
      const bytes = Buffer.byteLength(text);
      if (bytes > limit) problems.push(`${bundle.path}:${bundle.lines.get(t.id)}: ${k === 0 ? 'prompt' : `followups[${k - 1}]`} is ${bytes} bytes; ${harness} takes at most ${limit} bytes in one message`);
    }
  }
  if (problems.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the tasks file has prompts ${harness} cannot take; nothing was run:\n${problems.join('\n')}`);
}

/**
 * A task's files may not write the harness's own configuration (a planted `.claude/settings.json` can move its model
 * endpoint or proxy away from roller's recording proxy): refused before anything runs, naming the task and the file.
 */
export function refuseHarnessConfigFiles(tasks: readonly Task[], harness: string, configFiles: readonly string[]): void {
  const config = new Set(configFiles.map((f) => normalize(f)));
  for (const t of tasks) {
    for (const f of Object.keys(t.files ?? {})) {
      if (!config.has(normalize(f))) continue;
      throw new RollerError(
        ErrorCode.TASK_FILE_REFUSED,
        `task '${t.id}': its file '${f}' is ${harness}'s own configuration, which roller sets (model endpoint, credential, proxy); remove it from the task's files, or give what it configures as roller options`,
      );
    }
  }
}

const normalize = (p: string) => p.replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.').join('/').toLowerCase();
