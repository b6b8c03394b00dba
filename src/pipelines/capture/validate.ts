import { existsSync } from 'node:fs';
import { readdir, readFile } from '../../core/thread-fs.js';
import stableStringify from 'fast-json-stable-stringify';
import { join } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { sha256File } from '../../core/hashing.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import { Call } from '../../schemas/call.js';
import { fieldsOf } from '../../schemas/call-context.js';
import { readCallsLazily } from '../../sources/archive/calls-reader.js';
import { Manifest, OlderManifest } from '../../schemas/manifest.js';
import { Relation } from '../../schemas/relation.js';
import { checkValue } from '../../schemas/validate.js';

type Json = Record<string, any>;

/**
 * `roller validate-capture DIR`: the published hashes, the schemas, the attribution (participants' call_ids
 * against the calls' participant_id) and every reference of relations.jsonl. Each problem names the file,
 * the line where there is one, and what is wrong. Empty when the capture holds. The older layouts read
 * too: compact/v1 (no lifecycle, retention or coverage fields) and legacy (participants/<id>/calls.jsonl
 * copies, checked record for record against calls.jsonl, or standing in for it; no relations.jsonl).
 */
export async function validateCapture(dir: string): Promise<string[]> {
  const problems: string[] = [];
  let manifest: Json;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
  } catch (err) {
    return [`manifest.json: cannot be read (${(err as Error).message})`];
  }
  const layout = manifest.storage_layout as string | undefined;
  const older = layout === 'compact/v1' || layout === 'legacy';
  for (const i of checkValue(older ? OlderManifest : Manifest, manifest)) problems.push(`manifest.json: ${formatJsonPath(i.path)}: ${i.message}`);
  for (const [file, digest] of Object.entries((manifest.files ?? {}) as Record<string, { sha256: string; bytes: number }>)) {
    const actual = await sha256File(join(dir, file)).catch(() => undefined);
    if (!actual) problems.push(`${file}: listed in manifest.json but missing`);
    else if (actual.sha256 !== digest.sha256 || actual.bytes !== digest.bytes) {
      problems.push(`${file}: sha256 ${actual.sha256} (${actual.bytes} bytes) differs from the manifest's ${digest.sha256} (${digest.bytes} bytes): the file was changed after publication`);
    }
  }
  const calls = new Map<string, Json>();
  const copies = layout === 'legacy' ? await participantCopies(dir) : [];
  // A legacy capture may hold only the per-participant copies; their union is then its calls.
  const callFiles = layout === 'legacy' && !existsSync(join(dir, 'calls.jsonl')) ? copies : ['calls.jsonl'];
  for (const file of callFiles) problems.push(...(await readCallFile(join(dir, file), file, calls, copies.length > 0)));
  if (callFiles.length === 1 && copies.length > 0) problems.push(...(await checkCopies(dir, copies, calls)));
  const participants = new Map<string, Json>(((manifest.participants ?? []) as Json[]).map((p) => [p.participant_id, p]));
  for (const [id, c] of calls) {
    if (c.participant_id !== null && !participants.has(c.participant_id)) problems.push(`calls.jsonl: call ${id} names participant ${c.participant_id}, not in manifest.json`);
  }
  for (const p of participants.values()) {
    for (const id of (p.call_ids ?? []) as string[]) {
      if (calls.get(id)?.participant_id !== p.participant_id) problems.push(`manifest.json: participant ${p.participant_id} lists call ${id}, which ${calls.has(id) ? 'calls.jsonl attributes elsewhere' : 'is not in calls.jsonl'}`);
    }
  }
  const rctx = createStageContext();
  // The legacy layout predates relations.jsonl: absent there means none recorded, not a broken capture.
  const relationsFile = join(dir, 'relations.jsonl');
  const relations = layout === 'legacy' && !existsSync(relationsFile) ? (async function* () {})() : jsonlFileSource(relationsFile, { onBadLine: 'reject' })(rctx);
  for await (const env of relations) {
    const r = env.data as Json;
    for (const i of checkValue(Relation, r)) problems.push(`relations.jsonl:${env.origin.line}: ${formatJsonPath(i.path)}: ${i.message}`);
    if (r.parent_call_id !== 'unknown' && !calls.has(r.parent_call_id)) problems.push(`relations.jsonl:${env.origin.line}: parent_call_id ${r.parent_call_id} is not in calls.jsonl`);
    if (r.in_call_id !== null && !calls.has(r.in_call_id)) problems.push(`relations.jsonl:${env.origin.line}: in_call_id ${r.in_call_id} is not in calls.jsonl`);
    for (const key of ['parent_participant_id', 'child_participant_id']) {
      if (r[key] !== null && !participants.has(r[key])) problems.push(`relations.jsonl:${env.origin.line}: ${key} ${r[key]} is not in manifest.json`);
    }
  }
  for (const r of rctx.rejects) problems.push(`relations.jsonl:${r.origin.line}: ${r.reason}`);
  return problems;
}

/**
 * The calls of one calls.jsonl into `calls`, each checked against its schema. Read as the archive reader reads them,
 * each request body left as bytes (it is most of the file, and the manifest's sha256 already holds it to what was
 * published); only a file that does not read that way is read again line by line, to name every damaged line.
 * `whole`: keep each call whole (the legacy copies are compared with it), else its fields without the body.
 */
async function readCallFile(path: string, file: string, calls: Map<string, Json>, whole: boolean): Promise<string[]> {
  const problems: string[] = [];
  const lazy = whole ? undefined : await readCallsLazily(path).catch(() => undefined);
  if (lazy) {
    lazy.forEach((c, i) => {
      const fields = { ...fieldsOf(c), context: null };
      for (const issue of checkValue(Call, fields)) problems.push(`${file}:${i + 1}: ${formatJsonPath(issue.path)}: ${issue.message}`);
      calls.set(c.call_id, fields);
    });
    return problems;
  }
  const ctx = createStageContext();
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject' })(ctx)) {
    for (const i of checkValue(Call, env.data)) problems.push(`${file}:${env.origin.line}: ${formatJsonPath(i.path)}: ${i.message}`);
    calls.set((env.data as Json).call_id, env.data as Json);
  }
  for (const r of ctx.rejects) problems.push(`${file}:${r.origin.line}: ${r.reason}`);
  return problems;
}

/** participants/<id>/calls.jsonl of the legacy layout (relative paths, sorted). */
async function participantCopies(dir: string): Promise<string[]> {
  const entries = await readdir(join(dir, 'participants'), { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && existsSync(join(dir, 'participants', e.name, 'calls.jsonl')))
    .map((e) => `participants/${e.name}/calls.jsonl`)
    .sort();
}

/**
 * A legacy capture that has both: every per-participant copy must hold exactly the calls calls.jsonl
 * attributes to that participant, record for record.
 */
async function checkCopies(dir: string, copies: string[], calls: Map<string, Json>): Promise<string[]> {
  const problems: string[] = [];
  for (const file of copies) {
    const participant = file.split('/')[1]!;
    const seen = new Set<string>();
    const ctx = createStageContext();
    for await (const env of jsonlFileSource(join(dir, file), { onBadLine: 'reject' })(ctx)) {
      const c = env.data as Json;
      seen.add(c.call_id);
      const main = calls.get(c.call_id);
      if (!main) problems.push(`${file}:${env.origin.line}: call ${c.call_id} is not in calls.jsonl`);
      else if (stableStringify(main) !== stableStringify(c)) problems.push(`${file}:${env.origin.line}: call ${c.call_id} differs from its record in calls.jsonl`);
    }
    for (const r of ctx.rejects) problems.push(`${file}:${r.origin.line}: ${r.reason}`);
    for (const [id, c] of calls) if (c.participant_id === participant && !seen.has(id)) problems.push(`${file}: call ${id} of ${participant} is missing from the copy`);
  }
  return problems;
}
