import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether a process of this PID is alive on this host (one we may not signal is alive too). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the entries of `dir` whose name `pidOf` reads a PID from, when that process is gone and is not this one:
 * what a killed roller left half-made (a temp file, a building directory). Answers the paths removed.
 */
export async function removeDeadLeftovers(dir: string, pidOf: (name: string) => number | undefined): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const pid = pidOf(name);
    if (pid === undefined || pid === process.pid || processAlive(pid)) continue;
    await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined);
    removed.push(join(dir, name));
  }
  return removed;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The PID in `<prefix><PID><suffix>`, where suffix matches the rest of the name. */
export function pidAfter(prefix: string, suffix = ''): (name: string) => number | undefined {
  const pattern = new RegExp(`^${escape(prefix)}(\\d+)${suffix}$`);
  return (name) => {
    const m = pattern.exec(name);
    return m ? Number(m[1]) : undefined;
  };
}

/** Every atomic writer's temp file in `dir` (`NAME.PID.tmp`, `.NAME.PID.HEX.tmp`) whose process is gone. */
export async function removeDeadTempsIn(dir: string): Promise<string[]> {
  return removeDeadLeftovers(dir, (name) => {
    const m = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name) ?? /^.+\.(\d+)\.tmp$/.exec(name);
    return m ? Number(m[1]) : undefined;
  });
}
