import { lstat, mkdir, readdir, readFile, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { ensurePrivateDir } from '../../core/private-dir.js';

/** The run's process lock (core/process-lock.ts): who is collecting into the run right now. */
export const RUN_LOCK_FILE = '.roller.lock';
/** One file per sample attempt under way, naming its temporary HOME and work directory: what a killed run leaves. */
const RUNNING_DIR = '.running';
/** Every attempt's temporary directory is made with this prefix under the system's temp directory. */
export const ATTEMPT_DIR_PREFIX = 'roller-sample-';

/** A run name is one path segment of safe characters: it never climbs out of --output or hides. */
export function checkRunName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(name)) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--run-name '${name}': a run name is one directory name of letters, digits, '.', '_' and '-', starting with a letter or digit (no '/', no '..')`);
  }
}

/**
 * The run directory under `output`, checked before anything runs: --output exists or can be made, is a directory and
 * is writable; the run directory likewise. Each failure says which check failed, where, and what to do.
 */
export async function prepareRunDir(output: string, runName: string): Promise<string> {
  checkRunName(runName);
  await ensurePrivateDir(output, '--output');
  const runDir = join(output, runName);
  await ensurePrivateDir(runDir, `the run directory (--output ${output} --run-name ${runName})`);
  return runDir;
}

interface AttemptRecord {
  index: number;
  attempt: number;
  runtime: string;
  pid: number;
  started_at: string;
}

/** Notes a sample attempt's temporary directory before anything is put in it (removed again when it ends). */
export async function noteAttempt(runDir: string, record: Omit<AttemptRecord, 'pid' | 'started_at'>): Promise<() => Promise<void>> {
  const dir = join(runDir, RUNNING_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${record.index}.json`);
  await writeFile(file, `${JSON.stringify({ ...record, pid: process.pid, started_at: new Date().toISOString() })}\n`, { mode: 0o600 });
  return () => rm(file, { force: true });
}

/** The attempts a run that stopped without ending them left behind (a kill -9): sample index and temporary dir. */
export async function leftoverAttempts(runDir: string): Promise<AttemptRecord[]> {
  const dir = join(runDir, RUNNING_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: AttemptRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    try {
      out.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as AttemptRecord);
    } catch {
      // cut while written: its directory name is unknown, only the note is removed
      out.push({ index: Number.parseInt(name, 10), attempt: 0, runtime: '', pid: 0, started_at: 'unknown' });
    }
  }
  return out;
}

/**
 * Removes what a killed run left: each noted attempt's temporary directory — only a roller-sample-* directory
 * directly under the system's temp directory, never a link — and the notes. Returns the directories removed.
 */
export async function cleanLeftovers(runDir: string, notice?: (message: string) => void): Promise<string[]> {
  const removed: string[] = [];
  const temps = new Set([tmpdir(), await realpath(tmpdir())]);
  for (const a of await leftoverAttempts(runDir)) {
    const safe = a.runtime !== '' && temps.has(dirname(a.runtime)) && basename(a.runtime).startsWith(ATTEMPT_DIR_PREFIX);
    const st = safe ? await lstat(a.runtime).catch(() => undefined) : undefined;
    if (!st?.isDirectory()) continue;
    const failed = await removeScratch(a.runtime);
    if (failed) notice?.(`could not remove ${a.runtime}, which a killed run of ${runDir} left (${failed}); a process of that run may still be writing there: remove it by hand once it has ended`);
    else removed.push(a.runtime);
  }
  await rm(join(runDir, RUNNING_DIR), { recursive: true, force: true });
  // The run-level files it was writing (renamed into place only at a run's end): their temporary files.
  for (const name of await readdir(runDir).catch(() => [] as string[])) {
    if (/^(sft|sft_segments)\.jsonl\.\d+\.tmp$/.test(name)) await rm(join(runDir, name), { force: true });
  }
  return removed;
}

/**
 * Removes a sample's temporary directory, retrying while something still ends in it (a process's last writes make
 * rmdir fail with ENOTEMPTY); the error's message if it could not, so that a caller says so instead of crashing.
 */
export async function removeScratch(dir: string): Promise<string | undefined> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The notes' directory, once every attempt of this run has ended (empty then): nothing of it stays in the run. */
export async function endAttemptNotes(runDir: string): Promise<void> {
  await rmdir(join(runDir, RUNNING_DIR)).catch(() => undefined); // not empty: an attempt still noted (a killed run's)
}
