import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { sha256File } from '../../core/hashing.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import { Call } from '../../schemas/call.js';
import { Manifest } from '../../schemas/manifest.js';
import { Relation } from '../../schemas/relation.js';
import { checkValue } from '../../schemas/validate.js';

type Json = Record<string, any>;

/**
 * `roller validate-capture DIR`: the published hashes, the schemas, the attribution (participants' call_ids
 * against the calls' participant_id) and every reference of relations.jsonl. Each problem names the file,
 * the line where there is one, and what is wrong. Empty when the capture holds.
 */
export async function validateCapture(dir: string): Promise<string[]> {
  const problems: string[] = [];
  let manifest: Json;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
  } catch (err) {
    return [`manifest.json: cannot be read (${(err as Error).message})`];
  }
  for (const i of checkValue(Manifest, manifest)) problems.push(`manifest.json: ${formatJsonPath(i.path)}: ${i.message}`);
  for (const [file, digest] of Object.entries((manifest.files ?? {}) as Record<string, { sha256: string; bytes: number }>)) {
    const actual = await sha256File(join(dir, file)).catch(() => undefined);
    if (!actual) problems.push(`${file}: listed in manifest.json but missing`);
    else if (actual.sha256 !== digest.sha256 || actual.bytes !== digest.bytes) {
      problems.push(`${file}: sha256 ${actual.sha256} (${actual.bytes} bytes) differs from the manifest's ${digest.sha256} (${digest.bytes} bytes): the file was changed after publication`);
    }
  }
  const ctx = createStageContext();
  const calls = new Map<string, Json>();
  for await (const env of jsonlFileSource(join(dir, 'calls.jsonl'), { onBadLine: 'reject' })(ctx)) {
    for (const i of checkValue(Call, env.data)) problems.push(`calls.jsonl:${env.origin.line}: ${formatJsonPath(i.path)}: ${i.message}`);
    calls.set((env.data as Json).call_id, env.data as Json);
  }
  for (const r of ctx.rejects) problems.push(`calls.jsonl:${r.origin.line}: ${r.reason}`);
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
  for await (const env of jsonlFileSource(join(dir, 'relations.jsonl'), { onBadLine: 'reject' })(rctx)) {
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
