/**
 * A large reprocess archive from a real one: every sample of a base run (real Claude Code on the scripted
 * model, captures with raw/ kept) copied over and over as new samples with fresh ids — the session id (in
 * file names and records) and the capture scope (every call and relation id) — until the archive holds the
 * requested bytes. Each copy's manifest lists the new files' hashes, so the archive validates.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

type Json = Record<string, any>;

function replaceAll(buf: Buffer, from: Buffer, to: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let i = buf.indexOf(from); i !== -1; i = buf.indexOf(from, i + from.length)) {
    parts.push(buf.subarray(at, i), to);
    at = i + from.length;
  }
  if (at === 0) return buf;
  parts.push(buf.subarray(at));
  return Buffer.concat(parts);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Copies `base` (a run dir) into `out` with samples replicated until at least `bytes`; returns the archive's raw bytes. */
export function generateArchive(base: string, out: string, bytes: number): { samples: number; bytes: number } {
  rmSync(out, { recursive: true, force: true });
  const building = `${out}.building`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const run = JSON.parse(readFileSync(join(base, 'info.json'), 'utf8')) as Json;
  const lock = JSON.parse(readFileSync(join(base, 'lock.json'), 'utf8')) as Json;
  const rows: Json[] = [];
  let total = 0;
  let index = 0;
  while (total < bytes) {
    for (const row of run.samples as Json[]) {
      const src = join(base, row.path);
      const info = JSON.parse(readFileSync(join(src, 'info.json'), 'utf8')) as Json;
      const session = (info.runtime.participants as Json[]).find((p) => p.role === 'root')!.native_id as string;
      const capture = join(src, info.runtime.capture.path);
      const scope = (JSON.parse(readFileSync(join(capture, 'manifest.json'), 'utf8')) as Json).capture_scope as string;
      const swaps: [Buffer, Buffer][] = [
        [Buffer.from(session), Buffer.from(randomUUID())],
        [Buffer.from(scope), Buffer.from(randomBytes(scope.length / 2).toString('hex'))],
      ];
      const rel = `samples/${row.path.split('/')[1]}/${index}_${info.task_id}`;
      const dst = join(building, rel);
      for (const f of filesUnder(src)) {
        let data: Buffer = readFileSync(f);
        for (const [a, b] of swaps) data = replaceAll(data, a, b);
        let name = relative(src, f);
        for (const [a, b] of swaps) name = name.split(a.toString()).join(b.toString());
        mkdirSync(dirname(join(dst, name)), { recursive: true });
        writeFileSync(join(dst, name), data);
        if (name.includes('capture/') && (name.endsWith('.jsonl') || name.includes('/raw/'))) total += data.length;
      }
      // The copy's own index, and its manifest's hashes of the rewritten files.
      const copied = JSON.parse(readFileSync(join(dst, 'info.json'), 'utf8')) as Json;
      copied.index = index;
      writeFileSync(join(dst, 'info.json'), `${JSON.stringify(copied, null, 2)}\n`);
      const manifestPath = join(dst, info.runtime.capture.path, 'manifest.json');
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Json;
      for (const name of Object.keys(manifest.files ?? {})) {
        const data = readFileSync(join(dirname(manifestPath), name));
        manifest.files[name] = { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length };
      }
      writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
      rows.push({ ...row, index, path: rel });
      index++;
      if (total >= bytes) break;
    }
  }
  run.samples = rows;
  run.progress = { total: rows.length, processed: rows.length, pending: 0 };
  lock.requests = rows.map((r) => ({ index: r.index, task_id: r.task_id, model: r.model }));
  writeFileSync(join(building, 'info.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(join(building, 'lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  renameSync(building, out);
  return { samples: rows.length, bytes: total };
}

/** The archive's evidence: every calls.jsonl and native JSONL file under the samples' captures. */
export function archiveJsonl(run: string): string[] {
  return filesUnder(join(run, 'samples')).filter((f) => f.includes('/capture/') && f.endsWith('.jsonl'));
}

export const sizeOf = (files: string[]) => files.reduce((a, f) => a + statSync(f).size, 0);
