/**
 * A large CLAUDE_CONFIG_DIR made of the real line shapes of the lab runs (tests/fixtures/claude-code/lab-*):
 * each copy gets fresh ids — session, agent, uuids, message, request and tool-use ids — so no two sessions
 * share a message id, and sub-agent files and meta.json come along. Deterministic.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtures = fileURLToPath(new URL('../../../tests/fixtures/claude-code/', import.meta.url));
const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:msg|req|toolu)_[A-Za-z0-9]{10,}|\ba[0-9a-f]{16}\b/g;

interface Template {
  files: { rel: string; text: string }[];
}

async function template(dir: string): Promise<Template> {
  const root = join(dir, 'projects');
  const files: { rel: string; text: string }[] = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) files.push({ rel: relative(root, join(e.parentPath, e.name)), text: await readFile(join(e.parentPath, e.name), 'utf8') });
  }
  return { files };
}

/** Same length, different per copy: the copy number overwrites the id's tail (hex-safe for uuids). */
function renumber(id: string, copy: number): string {
  const tag = copy.toString(16).padStart(6, '0');
  return id.slice(0, id.length - tag.length) + tag;
}

export async function generateTree(out: string, targetBytes: number): Promise<{ sessions: number; bytes: number }> {
  const templates = [await template(join(fixtures, 'lab-single')), await template(join(fixtures, 'lab-nofwd'))];
  let bytes = 0;
  let copy = 0;
  while (bytes < targetBytes) {
    const t = templates[copy % templates.length]!;
    const project = `-workspace-project-${copy % 40}`;
    const map = new Map<string, string>();
    const swap = (s: string) => s.replace(ID, (id) => map.get(id) ?? (map.set(id, renumber(id, copy + 1)), map.get(id)!));
    for (const f of t.files) {
      const rel = swap(f.rel.replace(/^[^/]+/, project));
      const text = swap(f.text);
      await mkdir(join(out, 'projects', rel, '..'), { recursive: true });
      await writeFile(join(out, 'projects', rel), text);
      bytes += Buffer.byteLength(text);
    }
    copy++;
  }
  return { sessions: copy, bytes };
}
