import { readFileSync } from 'node:fs';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { ErrorCode, RollerError } from './errors.js';

/** Who holds a lock: written into the lock file when it is taken. */
export interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  /** The holder's start time in clock ticks since boot (/proc/PID/stat): a reused pid is not the holder. */
  process_start: string | null;
  command: string;
}

/** A lock's holder and whether it still runs: `gone` is certain (same host, no such process); `unknown`, another host. */
export interface LockState {
  holder: LockHolder;
  alive: 'yes' | 'gone' | 'unknown';
}

export interface HeldLock {
  readonly path: string;
  /** The holder a stale lock named, when this one took it over. */
  readonly tookOver: LockHolder | undefined;
  /** Removes the lock; `handBack`: a stale lock taken over is put back as it was (a refused takeover changes nothing). */
  release(options?: { handBack?: boolean }): Promise<void>;
}

/** A process's start time from /proc (Linux), or null where there is none. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockHolder): LockState['alive'] {
  if (holder.host !== hostname()) return 'unknown';
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return 'gone';
  }
  // The pid is taken: by the holder, unless its start time says another process got the number since.
  const start = processStart(holder.pid);
  return holder.process_start !== null && start !== null && start !== holder.process_start ? 'gone' : 'yes';
}

/** The lock at `path`, if any, with whether its holder still runs. */
export async function inspectLock(path: string): Promise<LockState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let holder: LockHolder;
  try {
    holder = JSON.parse(text) as LockHolder;
  } catch {
    // Cut while it was written (the writer died between create and write): nobody can hold it.
    return { holder: { pid: 0, host: hostname(), started_at: 'unknown', process_start: null, command: 'unknown (the lock file is damaged)' }, alive: 'gone' };
  }
  return { holder, alive: isAlive(holder) };
}

export function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} on ${h.host} since ${h.started_at} (${h.command})`;
}

/**
 * Takes the lock at `path` for this process: created exclusively, naming pid, host and start time. A lock whose
 * holder is gone (a killed run) is taken over only when `takeOverStale` says so; otherwise, and for a live or
 * unknowable holder, a typed error says who holds it and what to do. `what` names the thing locked ("the run
 * runs/demo"); `staleHint` says how to take over a stale lock ("pass --resume").
 */
export async function acquireLock(path: string, o: { what: string; command: string; takeOverStale: boolean; staleHint: string }): Promise<HeldLock> {
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), process_start: processStart(process.pid), command: o.command };
  let tookOver: LockHolder | undefined;
  for (let round = 0; round < 3; round++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(me)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      const stale = tookOver;
      return {
        path,
        tookOver,
        release: async (options = {}) => {
          if (options.handBack && stale) await writeFile(path, `${JSON.stringify(stale)}\n`, { mode: 0o600 });
          else await releaseIfMine(path, me);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new RollerError(ErrorCode.INVALID_OPTIONS, `${o.what}: its lock ${path} cannot be created (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
    const state = await inspectLock(path);
    if (!state) continue; // released meanwhile: try again
    if (state.alive === 'yes') throw new RollerError(ErrorCode.RUN_LOCKED, `${o.what} is in use by ${describeHolder(state.holder)}; wait for it to end, or stop it first`);
    if (state.alive === 'unknown') throw new RollerError(ErrorCode.RUN_LOCKED, `${o.what} is locked by ${describeHolder(state.holder)}, which cannot be checked from here; if that process is gone, remove ${path}`);
    if (!o.takeOverStale) throw new RollerError(ErrorCode.RUN_LOCKED, `${o.what} was left by ${describeHolder(state.holder)}, which is gone (killed?); ${o.staleHint}`);
    // Move the stale lock aside, then check it is the one judged stale: another process may have taken it over first.
    const aside = `${path}.stale-${process.pid}`;
    try {
      await rename(path, aside);
    } catch {
      continue;
    }
    const moved = await inspectLock(aside);
    if (moved && moved.alive !== 'gone') {
      await rename(aside, path).catch(() => undefined);
      throw new RollerError(ErrorCode.RUN_LOCKED, `${o.what} was just taken by ${describeHolder(moved.holder)}`);
    }
    await rm(aside, { force: true });
    tookOver = state.holder;
  }
  throw new RollerError(ErrorCode.RUN_LOCKED, `${o.what}: its lock ${path} kept changing hands; try again`);
}

async function releaseIfMine(path: string, me: LockHolder): Promise<void> {
  const state = await inspectLock(path).catch(() => undefined);
  if (state && state.holder.pid === me.pid && state.holder.started_at === me.started_at) await rm(path, { force: true });
}
