/**
 * A user's own script: the relations of a published capture derived again from its files alone — the attributed
 * calls in calls.jsonl and the participants in manifest.json — with roller's exported correlator (deriveRelations),
 * and compared with the relations.jsonl the capture published.
 *
 *   npm run build && node dist/examples/rederive-relations.js runs/demo/samples/scripted_default/0002_delegate/capture/attempt-0001
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deriveRelations, harnessAdapter, readCallsLazily, type Manifest, type ParticipantUsage, type Relation } from '../src/index.js';

export async function rederiveRelations(captureDir: string): Promise<{ derived: Relation[]; published: Relation[] }> {
  const manifest = JSON.parse(await readFile(join(captureDir, 'manifest.json'), 'utf8')) as Manifest;
  const calls = await readCallsLazily(join(captureDir, 'calls.jsonl'));
  // The manifest's participants as the correlator takes them: tree, spawn, status and where it was read.
  const participants: ParticipantUsage[] = manifest.participants.map((p) => ({
    participant: p.participant_id,
    role: p.role,
    native_id: p.native_ids.native_id ?? p.participant_id,
    parent: p.parent_participant_id,
    spawn_tool_call_id: p.spawn_tool_call_id,
    depth: p.depth,
    tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 },
    messages: p.call_ids.length,
    message_ids: [],
    status: p.status,
    status_source: p.status_source,
    cost_usd: null,
    cost_note: null,
    reason: p.reason ?? null,
    spawn_result: p.spawn_result ?? null,
  }));
  const agentPaths = Object.fromEntries(manifest.participants.flatMap((p) => (p.native_ids.agent_path ? [[p.native_ids.native_id!, p.native_ids.agent_path]] : [])));
  // The harness's own delivery evidence (its adapter's), as the capture was made with.
  const { delivery } = harnessAdapter(manifest.harness.name);
  let derived = deriveRelations({ calls, participants, scope: manifest.capture_scope, agentPaths, ...(delivery ? { delivery } : {}) });
  // Evidence in raw/ that the capture did not keep is marked so (seeds/000 retention), as the capture did.
  if (!manifest.raw_retained) derived = derived.map((r) => ({ ...r, evidence: r.evidence.map((e) => (e.source === 'calls.jsonl' ? e : { ...e, retained: false })) }));
  const published = (await readFile(join(captureDir, 'relations.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Relation);
  return { derived, published };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { derived, published } = await rederiveRelations(process.argv[2]!);
  const same = JSON.stringify(derived) === JSON.stringify(published);
  process.stdout.write(`${derived.length} relations derived from the published files; ${same ? 'the same as' : 'NOT the same as'} relations.jsonl\n`);
  process.exitCode = same ? 0 : 1;
}
