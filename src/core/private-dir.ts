import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCode, RollerError } from './errors.js';

/**
 * Makes sure `path` is a directory roller can write into, creating it (and its missing parents) owner-only: what
 * roller records — prompts, tool outputs — is private. An existing directory keeps its mode. Every failure says
 * which check failed, where, and what to do; `what` names the option the path came from (`--out`).
 */
export async function ensurePrivateDir(path: string, what: string): Promise<void> {
  try {
    await mkdirs(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EEXIST' || e.code === 'ENOTDIR') {
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${path}: it, or a path above it, is a file, not a directory; choose a directory`, { cause: err });
    }
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${path} cannot be created (${e.code ?? e.message}); choose a location you can write to`, { cause: err });
  }
  const info = await stat(path);
  if (!info.isDirectory()) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${path} is a file, not a directory; choose a directory`);
  try {
    await access(path, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${path} is not writable (${(err as NodeJS.ErrnoException).code}); choose a location you can write to`, { cause: err });
  }
}

/**
 * `mkdir -p` one level at a time, owner-only. Not node's `recursive: true`: on Node 20 it loops forever at full CPU
 * under a path where mkdir says ENOENT though the parent exists (/proc, some FUSE mounts).
 */
async function mkdirs(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw err;
    // The parent may be missing: make it, then try once more (a second ENOENT is the answer).
    await mkdirs(parent);
    await mkdir(path, { mode: 0o700 }).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}
