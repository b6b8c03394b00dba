import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { sha256File } from '../../core/hashing.js';

export interface ResultFile {
  path: string;
  size: number;
  mime: string;
  sha256: string;
}

const MIME: Record<string, string> = {
  '.txt': 'text/plain', '.md': 'text/markdown', '.json': 'application/json', '.jsonl': 'application/x-ndjson',
  '.csv': 'text/csv', '.html': 'text/html', '.js': 'text/javascript', '.ts': 'text/x-typescript', '.py': 'text/x-python',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.svg': 'image/svg+xml', '.pdf': 'application/pdf',
};

/**
 * results/ (seeds/003 §5.7): every ordinary file under the task's output directories, copied with its
 * relative path; symbolic links and special files are refused (never followed, never copied) and named,
 * while the safe files are still copied — the caller marks the sample error when `refused` is not empty.
 */
export async function copyResults(work: string, outputDirs: readonly string[], dest: string): Promise<{ files: ResultFile[]; refused: string[] }> {
  const files: ResultFile[] = [];
  const refused: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const rel = relative(work, path);
    const st = await lstat(path).catch(() => undefined);
    if (!st) return;
    if (st.isSymbolicLink()) refused.push(`${rel}: a symbolic link`);
    else if (st.isDirectory()) for (const e of (await readdir(path)).sort()) await visit(join(path, e));
    else if (st.isFile()) {
      await mkdir(join(dest, rel, '..'), { recursive: true });
      await copyFile(join(work, rel), join(dest, rel));
      const digest = await sha256File(join(dest, rel));
      files.push({ path: rel, size: digest.bytes, mime: MIME[extname(rel).toLowerCase()] ?? 'application/octet-stream', sha256: digest.sha256 });
    } else refused.push(`${rel}: not a regular file`);
  };
  for (const dir of outputDirs) await visit(join(work, dir));
  return { files, refused };
}
