import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ParticipantUsage } from '../../../src/harnesses/claude-code/participants.js';
import { Manifest, checkValue, type Call } from '../../../src/schemas/index.js';
import { validateCapture } from '../../../src/pipelines/capture/validate.js';
import { finalizeAttributed } from '../../support/finalize.js';
import { recordExamples } from '../../support/record-examples.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('publish');
const base = recordExamples.call as Call;
const call = (seq: number, id: string, extra: Partial<Call> = {}): Call => ({ ...base, call_id: `c-${seq}`, seq, response_id: id, tool_refs: [], ...extra });
const person = (participant: string, ids: string[], extra: Partial<ParticipantUsage> = {}): ParticipantUsage => ({
  participant, role: 'root', native_id: participant, parent: null, spawn_tool_call_id: null, depth: 0,
  tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 }, messages: ids.length, message_ids: ids,
  status: 'completed', status_source: 'main.jsonl:3', cost_usd: null, cost_note: null, reason: null, ...extra,
});
const common = { harness: { name: 'claude-code', version: '2.1.332' }, capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: true }, attempt: 1, scope: 's' } as const;

describe('publishing a capture', () => {
  it('on-error keeps raw/ only when something went wrong; after cleanup nothing points at removed files', async () => {
    const frames = join(tmp.path, 'frames');
    await writeFile(frames, 'x');
    const ok = await finalizeAttributed({ ...common, dir: join(tmp.path, 'ok'), calls: [call(0, 'm1')], participants: [person('root', ['m1'])], debugRetention: 'on-error', wireLog: frames });
    expect(ok).toMatchObject({ capture_status: 'complete', raw_retained: false });
    const written = JSON.parse((await readFile(join(tmp.path, 'ok', 'calls.jsonl'), 'utf8')).trim()) as Json;
    expect(written.response_path).toBeNull();
    expect(Object.keys(ok.files).sort()).toEqual(['calls.jsonl', 'relations.jsonl']);

    const bad = await finalizeAttributed({ ...common, dir: join(tmp.path, 'bad'), calls: [call(0, 'm1', { execution_status: 'failed' })], participants: [person('root', ['m1'])], debugRetention: 'on-error', wireLog: frames });
    expect(bad.raw_retained).toBe(true);
    expect(Object.keys(bad.files)).toContain('raw/wire.frames');
    const full = await finalizeAttributed({ ...common, dir: join(tmp.path, 'full'), calls: [call(0, 'm1')], participants: [person('root', ['m1'])], debugRetention: 'full', wireLog: frames });
    expect(full.raw_retained).toBe(true);
    const off = await finalizeAttributed({ ...common, dir: join(tmp.path, 'off'), calls: [call(0, 'm1', { execution_status: 'failed' })], participants: [person('root', ['m1'])], debugRetention: 'off', wireLog: frames });
    expect(off.raw_retained).toBe(false);
    for (const m of [ok, bad, full, off]) expect(checkValue(Manifest, m)).toEqual([]);
  });

  it('an unattributed call keeps the capture partial, while attributed calls stay exportable', async () => {
    const m = await finalizeAttributed({ ...common, dir: join(tmp.path, 'partial'), calls: [call(0, 'm1'), call(1, 'm_unknown')], participants: [person('root', ['m1'])], debugRetention: 'off' });
    expect(m).toMatchObject({ capture_status: 'partial', totals: { unattributed_calls: 1 } });
    const lines = (await readFile(join(tmp.path, 'partial', 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(lines.map((c) => c.export_status)).toEqual(['exportable', 'not_exportable']);
  });

  it('a child still running keeps the lifecycle pending and the capture partial: nothing unknown is complete', async () => {
    const kid = person('kid', [], { role: 'child', parent: 'root', depth: 1, spawn_tool_call_id: 't1', status: 'running', spawn_result: 'acknowledgement' });
    const m = await finalizeAttributed({ ...common, dir: join(tmp.path, 'pending'), calls: [call(0, 'm1', { tool_refs: [{ id: 't1', name: 'Agent' }] })], participants: [person('root', ['m1']), kid], debugRetention: 'off' });
    expect(m.lifecycle).toEqual({ status: 'pending', pending_participant_ids: ['kid'] });
    expect(m.capture_status).toBe('partial');
  });

  it('a completed child whose result never reached its parent leaves the lifecycle unknown; delivered, it is complete (A8.4)', async () => {
    const kid = person('kid', [], { role: 'child', parent: 'root', depth: 1, spawn_tool_call_id: 'toolu_A', status: 'completed', spawn_result: 'acknowledgement' });
    const spawn = call(0, 'm1', { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] });
    const undelivered = await finalizeAttributed({ ...common, dir: join(tmp.path, 'undelivered'), calls: [spawn], participants: [person('root', ['m1']), kid], debugRetention: 'off' });
    expect(undelivered.lifecycle).toEqual({ status: 'unknown', pending_participant_ids: [] });
    expect(undelivered.capture_status).toBe('partial');
    // Claude Code's task-notification naming the child and its tool use delivers it: the same capture is complete.
    const note = '<task-notification><task-id>kid</task-id><tool-use-id>toolu_A</tool-use-id><status>completed</status></task-notification>';
    const delivered = await finalizeAttributed({ ...common, dir: join(tmp.path, 'delivered'), calls: [spawn, call(1, 'm2', { context: { messages: [{ role: 'user', content: note }] } })], participants: [person('root', ['m1', 'm2']), kid], debugRetention: 'off' });
    expect(delivered.lifecycle).toEqual({ status: 'complete', pending_participant_ids: [] });
    expect(delivered.capture_status).toBe('complete');
  });

  it('a relation of unknown status (a child whose spawning call is not on record) leaves the lifecycle unknown, even for a failed child (A8.4)', async () => {
    const orphan = person('kid', [], { role: 'child', parent: null, depth: -1, spawn_tool_call_id: null, status: 'failed', reason: 'no tool call spawned it on record' });
    const m = await finalizeAttributed({ ...common, dir: join(tmp.path, 'orphan'), calls: [call(0, 'm1')], participants: [person('root', ['m1']), orphan], debugRetention: 'off' });
    expect(m.lifecycle).toEqual({ status: 'unknown', pending_participant_ids: [] });
    expect(m.capture_status).toBe('partial');
  });

  it('validate-capture reports a reference that points nowhere, with file and line', async () => {
    const dir = join(tmp.path, 'refs');
    await finalizeAttributed({ ...common, dir, calls: [call(0, 'm1')], participants: [person('root', ['m1'])], debugRetention: 'off' });
    expect(await validateCapture(dir)).toEqual([]);
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Json;
    manifest.participants[0].call_ids.push('c-missing');
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
    expect(await validateCapture(dir)).toEqual(['manifest.json: participant root lists call c-missing, which is not in calls.jsonl']);
  });
});
