import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { pidAfter, removeDeadLeftovers } from './dead-leftovers.js';
import { ErrorCode, RollerError } from './errors.js';

/**
 * A directory output built beside its place (`OUT.building-PID`) and renamed into it when `build` succeeds: a
 * failure or an abort leaves no partial output. OUT must not exist or be empty (checked before and again at the end).
 */
export async function buildDirectory<T>(out: string, what: string, build: (dir: string) => Promise<T>): Promise<T> {
  refuseNonEmpty(out, what);
  // What a killed build of this output left (OUT.building-PID of a dead process) goes first.
  await removeDeadLeftovers(dirname(out), pidAfter(`${basename(out)}.building-`));
  const building = `${out}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { recursive: true });
  try {
    const result = await build(building);
    refuseNonEmpty(out, what);
    await rm(out, { recursive: true, force: true });
    await rename(building, out);
    return result;
  } catch (err) {
    await rm(building, { recursive: true, force: true });
    throw err;
  }
}

function refuseNonEmpty(out: string, what: string): void {
  if (existsSync(out) && readdirSync(out).length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${out} is not empty: name a new directory for ${what} (nothing was written)`);
}
