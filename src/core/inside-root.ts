import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ErrorCode, RollerError } from './errors.js';

/**
 * Writing and reading inside a directory an agent could change (an attempt's HOME or work dir): no link is followed,
 * at any level below the root. A link there is an error that names it; a file's existing name (a link, or a hard link
 * to a file outside) is removed and the file made anew, so nothing outside is ever written through it.
 */
function componentsBelow(root: string, path: string): string[] {
  const rel = relative(root, path);
  if (rel === '') return [];
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new RollerError(ErrorCode.LINK_REFUSED, `${path} is not inside ${root}`);
  return rel.split(sep);
}

function linkRefused(path: string, what: string): RollerError {
  return new RollerError(ErrorCode.LINK_REFUSED, `${what}: ${path} is a symbolic link (made inside the attempt, perhaps by the agent); roller never follows one there`);
}

/** Each path from root down to `path` (root first) with what lstat says of it (null: absent). */
async function* levelsBelow(root: string, path: string): AsyncGenerator<{ at: string; st: Stats | null }> {
  let at = root;
  for (const part of ['', ...componentsBelow(root, path)]) {
    at = part === '' ? at : join(at, part);
    const st = await lstat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    yield { at, st };
  }
}

/** Throws LINK_REFUSED if the root or any existing component down to `path` is a symbolic link (absent ones are fine). */
export async function refuseLinksBelow(root: string, path: string, what: string): Promise<void> {
  for await (const { at, st } of levelsBelow(root, path)) {
    if (st === null) return;
    if (st.isSymbolicLink()) throw linkRefused(at, what);
  }
}

/** mkdir -p inside root, refusing a link at any level (it would make the directories elsewhere). */
export async function mkdirInside(root: string, dir: string, mode = 0o700): Promise<void> {
  for await (const { at, st } of levelsBelow(root, dir)) {
    if (st === null) {
      // The root is roller's own path (it may not exist yet); below it, one level at a time.
      await mkdir(at, at === root ? { recursive: true, mode } : { mode }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      continue;
    }
    if (st.isSymbolicLink()) throw linkRefused(at, `creating ${dir}`);
    if (!st.isDirectory()) throw new RollerError(ErrorCode.LINK_REFUSED, `creating ${dir}: ${at} is not a directory`);
  }
}

/** A file written inside root: its directories made without following links, its old name removed, O_EXCL|O_NOFOLLOW. */
export async function writeFileInside(root: string, path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  await mkdirInside(root, dirname(path));
  const st = await lstat(path).catch(() => null);
  if (st?.isDirectory()) throw new RollerError(ErrorCode.LINK_REFUSED, `${path} is a directory; roller writes a file there`);
  if (st) await unlink(path);
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** A copy of `source` (roller's own file) written inside root as writeFileInside writes. */
export async function copyFileInside(root: string, source: string, path: string, mode = 0o600): Promise<void> {
  await writeFileInside(root, path, await readFile(source), mode);
}
