import { readFile } from 'node:fs/promises';

/** A CLI's JSON-lines stdout as printed: each line that parses (a cut line, or a plain-text one, is no event). */
export async function stdoutEvents<T>(stdout: string): Promise<T[]> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // a cut line
    }
  }
  return out;
}
