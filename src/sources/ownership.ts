import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Gives a directory tree to another owner, links included as links (lchown: nothing a link points at is touched,
 * so a link the agent made never reaches a host file). A container's user writes its HOME and work dir this way
 * when roller runs as root; they come back to roller's own user before roller reads them.
 */
export async function chownTree(root: string, uid: number, gid: number): Promise<void> {
  const st = await lstat(root).catch(() => null);
  if (!st) return;
  if (st.uid !== uid || st.gid !== gid) await lchown(root, uid, gid);
  if (!st.isDirectory()) return;
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) await chownTree(path, uid, gid);
    else await lchown(path, uid, gid);
  }
}
