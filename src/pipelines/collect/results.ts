import { constants, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, rm } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { sha256File } from '../../core/hashing.js';

export interface ResultFile {
  path: string;
  size: number;
  mime: string;
  sha256: string;
}

export interface CopiedResults {
  files: ResultFile[];
  /** Paths not copied because they are links, special files, or reached through a link: the sample is an error. */
  refused: string[];
  /** Declared output directories the agent never made (a warning: the sample itself may be fine). */
  missing: string[];
  /** Safe files whose copy failed (a full disk, a file-size limit, a read error), each with why: the sample is an error. */
  failed: string[];
}

const MIME: Record<string, string> = {
  '.txt': 'text/plain', '.md': 'text/markdown', '.json': 'application/json', '.jsonl': 'application/x-ndjson',
  '.csv': 'text/csv', '.html': 'text/html', '.js': 'text/javascript', '.ts': 'text/x-typescript', '.py': 'text/x-python',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.svg': 'image/svg+xml', '.pdf': 'application/pdf',
};

/** All of one sample's results/ together (1 GiB): past it, a file is refused and named. */
export const DEFAULT_MAX_RESULTS_BYTES = 1 << 30;

/**
 * results/ (seeds/003 §5.7): every ordinary file under the task's output directories, copied with its relative path.
 * No link is followed anywhere: every segment of a declared directory is checked, every entry below it, and each file
 * is opened without following a link and checked, once open, to be the file inside the work directory it was named
 * as (a path swapped for a link after the check is caught there). Links and special files are refused and named;
 * the safe files are still copied — the caller marks the sample error when `refused` is not empty.
 */
export async function copyResults(work: string, outputDirs: readonly string[], dest: string, maxBytes = DEFAULT_MAX_RESULTS_BYTES): Promise<CopiedResults> {
  const out: CopiedResults = { files: [], refused: [], missing: [], failed: [] };
  const budget = { left: maxBytes, max: maxBytes };
  const realWork = await realpath(work);
  const visit = async (rel: string): Promise<void> => {
    const st = await lstat(join(work, rel)).catch(() => undefined);
    if (!st) return;
    if (st.isSymbolicLink()) out.refused.push(`${rel}: a symbolic link`);
    else if (st.isDirectory()) for (const e of (await readdir(join(work, rel))).sort()) await visit(join(rel, e));
    else if (st.isFile()) {
      const copied = await copyOne(realWork, rel, dest, budget).catch((err: NodeJS.ErrnoException) => ({ failed: `${rel}: ${err.code ?? 'error'} (${err.message})` }));
      if (typeof copied === 'string') out.refused.push(`${rel}: ${copied}`);
      else if ('failed' in copied) out.failed.push(copied.failed);
      else out.files.push(copied);
    } else out.refused.push(`${rel}: not a regular file`);
  };
  const declared = outputDirs.map((dir) => ({ dir, rel: dir.split(/[\\/]+/).filter((s) => s !== '' && s !== '.').join(sep) }));
  // A directory declared twice, or inside another declared one, is copied once (with the first or the outer one).
  const covered = (i: number) => declared.some((d, j) => j !== i && (d.rel === declared[i]!.rel ? j < i : d.rel === '' || declared[i]!.rel.startsWith(d.rel + sep)));
  for (const [i, { dir, rel }] of declared.entries()) {
    if (covered(i)) continue;
    const link = await linkOnTheWay(work, rel);
    if (link) out.refused.push(`${dir}: ${link} is a symbolic link (not followed)`);
    else if (!(await lstat(join(work, rel)).catch(() => undefined))) out.missing.push(dir);
    else await visit(rel);
  }
  return out;
}

/** The first segment of `rel` under `work` (not the last) that is a symbolic link, if any. */
async function linkOnTheWay(work: string, rel: string): Promise<string | undefined> {
  const segments = rel.split(sep).filter(Boolean);
  for (let i = 1; i < segments.length; i++) {
    const prefix = segments.slice(0, i).join(sep);
    const st = await lstat(join(work, prefix)).catch(() => undefined);
    if (!st) return undefined;
    if (st.isSymbolicLink()) return prefix;
  }
  return undefined;
}

/** One file copied from the descriptor it was opened as (never through a link); else why it was refused. */
async function copyOne(realWork: string, rel: string, dest: string, budget: { left: number; max: number }): Promise<ResultFile | string> {
  let handle;
  try {
    handle = await open(join(realWork, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ELOOP' ? 'a symbolic link' : `cannot be read (${(err as NodeJS.ErrnoException).code})`;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return 'not a regular file';
    // Another name of the same file may be outside the work directory (a hard link the agent made to it).
    if (st.nlink > 1) return `a hard link (${st.nlink} names; one may be a file outside the work directory)`;
    // A sparse file copies at its full size: a 1 TB hole would fill the disk.
    if (st.size > 64 << 10 && st.blocks * 512 < st.size / 2) return `a sparse file (${st.size} bytes, ${st.blocks * 512} on disk)`;
    if (st.size > budget.left) return `over the results limit (${st.size} bytes, ${budget.left} of ${budget.max} left; raise --max-results-mb)`;
    budget.left -= st.size;
    // Where the descriptor really is (Linux): a directory swapped for a link after the checks shows here.
    const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (actual !== undefined && actual !== join(realWork, rel)) return `reached through a symbolic link (it is ${actual})`;
    await mkdir(join(dest, rel, '..'), { recursive: true });
    try {
      await pipeline(handle.createReadStream({ autoClose: false }), createWriteStream(join(dest, rel), { flags: 'wx' }));
    } catch (err) {
      // No partial copy is left to pass for the file.
      await rm(join(dest, rel), { force: true }).catch(() => undefined);
      throw err;
    }
  } finally {
    await handle.close();
  }
  const digest = await sha256File(join(dest, rel));
  return { path: rel.split(sep).join('/'), size: digest.bytes, mime: MIME[extname(rel).toLowerCase()] ?? 'application/octet-stream', sha256: digest.sha256 };
}
