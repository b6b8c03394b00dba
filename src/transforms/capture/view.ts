import { readFile } from '../../core/thread-fs.js';
import { join } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';

type Json = Record<string, any>;

interface CallSummary {
  call_id: string;
  seq: number;
  model: string | null;
  tokens: string;
  statuses: string;
  spawns: string[];
}

/**
 * `roller view-capture DIR`: the call tree expanded by agent — participants, their calls with model, tokens
 * and statuses, and the relations — read from the files; no copy of anything is written. Only the small
 * fields of each call are kept while reading (never the request bodies).
 */
export async function viewCapture(dir: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
  const calls = new Map<string, CallSummary>();
  for await (const c of jsonlFileSource(join(dir, 'calls.jsonl'))(createStageContext())) {
    const r = c.data as Json;
    const u = r.usage?.normalized as Json | null;
    calls.set(r.call_id, {
      call_id: r.call_id,
      seq: r.seq,
      model: r.response_model ?? r.request_model ?? null,
      tokens: u ? `${u.input}/${u.cache_creation}/${u.cached_input}/${u.output}` : '-',
      statuses: `${r.execution_status}, ${r.identity_status}, ${r.export_status}`,
      spawns: ((r.tool_refs ?? []) as Json[]).map((t) => t.id as string),
    });
  }
  const relations: Json[] = [];
  for await (const r of jsonlFileSource(join(dir, 'relations.jsonl'))(createStageContext())) relations.push(r.data as Json);
  const participants = (manifest.participants ?? []) as Json[];
  const lines: string[] = [
    `${manifest.harness?.name} ${manifest.harness?.version} · capture ${manifest.capture_status} · lifecycle ${manifest.lifecycle?.status ?? 'n/a'} · ${calls.size} calls · ${relations.length} relations · raw ${manifest.raw_retained ? 'kept' : 'not kept'}`,
    'tokens are input/cache-write/cache-read/output',
  ];
  const show = (p: Json, indent: string) => {
    const rels = relations.filter((r) => r.child_participant_id === p.participant_id).map((r) => `${r.type}${r.status === 'unknown' ? ' (unknown)' : ''}`);
    lines.push(`${indent}${p.role} ${p.participant_id} (${p.status}${p.spawn_tool_call_id ? `, spawned by ${p.spawn_tool_call_id}` : ''})${rels.length ? ` [${rels.join(', ')}]` : ''}`);
    for (const id of (p.call_ids ?? []) as string[]) {
      const c = calls.get(id);
      if (!c) continue;
      const kids = participants.filter((k) => k.parent_participant_id === p.participant_id && c.spawns.includes(k.spawn_tool_call_id));
      lines.push(`${indent}  #${c.seq} ${c.call_id} ${c.model ?? '-'} ${c.tokens} ${c.statuses}${kids.length ? ` → spawns ${kids.map((k) => k.participant_id).join(', ')}` : ''}`);
    }
    for (const child of participants.filter((k) => k.parent_participant_id === p.participant_id)) show(child, `${indent}    `);
  };
  for (const root of participants.filter((p) => p.parent_participant_id === null)) show(root, '');
  const unattributed = [...calls.values()].filter((c) => !participants.some((p) => (p.call_ids as string[]).includes(c.call_id)));
  if (unattributed.length > 0) {
    lines.push('unattributed calls:');
    for (const c of unattributed) lines.push(`  #${c.seq} ${c.call_id} ${c.model ?? '-'} ${c.tokens} ${c.statuses}`);
  }
  return lines;
}
