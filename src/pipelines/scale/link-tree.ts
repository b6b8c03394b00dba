import { constants } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, readlink, rename, rm } from 'node:fs/promises';
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
 * source stays as it was. Parts may come from others: a symbolic link (which a reader of the merged run would follow
 * out of it) or anything else but files and directories is refused by name. A file's other hard links are allowed:
 * link mode makes them, and its content is the part's own (the kernel lets one link only files one may read and write).
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
      throw new RollerError(ErrorCode.MERGE_REFUSED, `${from}: a symbolic link (to ${await readlink(from)}); roller never writes one into a sample, and a reader of the merged run would follow it out — remove it and merge again`);
    } else {
      throw new RollerError(ErrorCode.MERGE_REFUSED, `${from}: neither a file nor a directory; a sample holds nothing else — remove it and merge again`);
    }
  };
  await visit(src, dst);
  return placed;
}

/** Throws MERGE_REFUSED, naming it, at the first symbolic link or special file in `src`'s tree (checked before anything is placed). */
export async function refuseLinksInTree(src: string): Promise<void> {
  const st = await lstat(src);
  if (st.isDirectory()) {
    for (const name of await readdir(src)) await refuseLinksInTree(join(src, name));
  } else if (st.isSymbolicLink()) {
    throw new RollerError(ErrorCode.MERGE_REFUSED, `${src}: a symbolic link (to ${await readlink(src)}); roller never writes one into a sample, and a reader of the merged run would follow it out — remove it and merge again (nothing was written)`);
  } else if (!st.isFile()) {
    throw new RollerError(ErrorCode.MERGE_REFUSED, `${src}: neither a file nor a directory; a sample holds nothing else — remove it and merge again (nothing was written)`);
  }
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
