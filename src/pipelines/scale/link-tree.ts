import { constants } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';

export interface Placed {
  linked: number;
  copied: number;
  moved: number;
}

/** Errors of link(2) that a copy gets around: another filesystem, a filesystem without hard links, a full link count. */
const CANNOT_LINK = new Set(['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * `src`'s tree at `dst` (which must not exist) with every file hard-linked — or copied where it cannot be — so the
 * source stays as it was. A symbolic link is made again as the same link, never followed; anything else but files,
 * directories and links is refused by name.
 */
export async function linkTree(src: string, dst: string): Promise<Placed> {
  const placed: Placed = { linked: 0, copied: 0, moved: 0 };
  await mkdir(dirname(dst), { recursive: true, mode: 0o700 });
  const visit = async (from: string, to: string): Promise<void> => {
    const st = await lstat(from);
    if (st.isDirectory()) {
      await mkdir(to, { mode: st.mode & 0o7777 });
      for (const name of (await readdir(from)).sort()) await visit(join(from, name), join(to, name));
    } else if (st.isFile()) {
      try {
        await link(from, to);
        placed.linked++;
      } catch (err) {
        if (!CANNOT_LINK.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
        await copyFile(from, to, constants.COPYFILE_EXCL);
        placed.copied++;
      }
    } else if (st.isSymbolicLink()) {
      await symlink(await readlink(from), to);
      placed.copied++;
    } else {
      throw new RollerError(ErrorCode.MERGE_REFUSED, `${from}: neither a file, a directory nor a symbolic link; a sample holds none of those — remove it and merge again`);
    }
  };
  await visit(src, dst);
  return placed;
}

/** `src` renamed to `dst` (its parent made); across filesystems, linked (copied) and then removed. */
export async function moveTree(src: string, dst: string): Promise<Placed> {
  await mkdir(dirname(dst), { recursive: true, mode: 0o700 });
  try {
    await rename(src, dst);
    return { linked: 0, copied: 0, moved: 1 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const placed = await linkTree(src, dst);
  await rm(src, { recursive: true, force: true });
  return placed;
}
