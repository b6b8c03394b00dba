import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256File } from '../../../src/core/hashing.js';
import type { ParticipantUsage } from '../../../src/harnesses/claude-code/participants.js';
import type { Call } from '../../../src/schemas/index.js';
import { validateCapture } from '../../../src/pipelines/capture/validate.js';
import { finalizeAttributed } from '../../support/finalize.js';
import { recordExamples } from '../../support/record-examples.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('older-layouts');
const base = recordExamples.call as Call;
const call = (seq: number, id: string): Call => ({ ...base, call_id: `c-${seq}`, seq, response_id: id, tool_refs: [], participant_id: null, identity_status: 'unattributed' });
const person = (participant: string, ids: string[], extra: Partial<ParticipantUsage> = {}): ParticipantUsage => ({
  participant, role: 'root', native_id: participant, parent: null, spawn_tool_call_id: null, depth: 0,
  tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 }, messages: ids.length, message_ids: ids,
  status: 'completed', status_source: 'main.jsonl:3', cost_usd: null, cost_note: null, reason: null, ...extra,
});

/** A compact/v2 capture, rewritten into an older layout the way those writers laid it out. */
async function older(name: string, layout: 'compact/v1' | 'legacy', options: { copies?: boolean; dropCalls?: boolean; dropRelations?: boolean } = {}): Promise<string> {
  const dir = join(tmp.path, name);
  await finalizeAttributed({
    dir, calls: [call(0, 'm1'), call(1, 'm2'), call(2, 'k1')],
    participants: [person('root', ['m1', 'm2']), person('kid', ['k1'], { role: 'child', parent: 'root', depth: 1, spawn_tool_call_id: 'toolu_1' })],
    harness: { name: 'claude-code', version: 't' }, capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: false },
    attempt: 1, scope: 's', debugRetention: 'off',
  });
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
  delete manifest.lifecycle;
  delete manifest.coverage;
  delete manifest.debug_retention;
  delete manifest.raw_retained;
  manifest.storage_layout = layout;
  if (options.copies) {
    const lines = (await readFile(join(dir, 'calls.jsonl'), 'utf8')).trim().split('\n');
    for (const p of ['root', 'kid']) {
      await mkdir(join(dir, 'participants', p), { recursive: true });
      await writeFile(join(dir, 'participants', p, 'calls.jsonl'), lines.filter((l) => (JSON.parse(l) as Json).participant_id === p).join('\n') + '\n');
      manifest.files[`participants/${p}/calls.jsonl`] = await sha256File(join(dir, 'participants', p, 'calls.jsonl'));
    }
  }
  if (options.dropCalls) {
    await rm(join(dir, 'calls.jsonl'));
    delete manifest.files['calls.jsonl'];
  }
  if (options.dropRelations) {
    await rm(join(dir, 'relations.jsonl'));
    delete manifest.files['relations.jsonl'];
  }
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

describe('validate-capture reads the older layouts (seeds/000)', () => {
  it('compact/v1: no lifecycle, coverage or retention fields', async () => {
    expect(await validateCapture(await older('v1', 'compact/v1'))).toEqual([]);
  });

  it('the same manifest claiming compact/v2 is rejected for the fields v2 requires', async () => {
    const dir = await older('v1-as-v2', 'compact/v1');
    const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...m, storage_layout: 'compact/v2' }));
    expect((await validateCapture(dir)).join('\n')).toMatch(/debug_retention/);
  });

  it('legacy: per-participant copies are checked record for record against calls.jsonl', async () => {
    const dir = await older('legacy', 'legacy', { copies: true, dropRelations: true });
    expect(await validateCapture(dir)).toEqual([]);
    // A copy that lost a call, and one whose record differs: both named with file and line.
    await writeFile(join(dir, 'participants', 'root', 'calls.jsonl'), (await readFile(join(dir, 'participants', 'root', 'calls.jsonl'), 'utf8')).split('\n')[0] + '\n');
    const kid = join(dir, 'participants', 'kid', 'calls.jsonl');
    await writeFile(kid, (await readFile(kid, 'utf8')).replace('"seq":2', '"seq":7'));
    const problems = (await validateCapture(dir)).join('\n');
    expect(problems).toContain('participants/root/calls.jsonl: call c-1 of root is missing from the copy');
    expect(problems).toContain('participants/kid/calls.jsonl:1: call c-2 differs from its record in calls.jsonl');
  });

  it('legacy without a top-level calls.jsonl: the copies are the calls', async () => {
    const dir = await older('legacy-copies-only', 'legacy', { copies: true, dropCalls: true, dropRelations: true });
    expect(await validateCapture(dir)).toEqual([]);
  });
});
