import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ParticipantUsage } from '../../../src/harnesses/claude-code/participants.js';
import { Manifest, checkValue, type Call } from '../../../src/schemas/index.js';
import { attributeCalls } from '../../../src/transforms/capture/index.js';
import { finalizeAttributed } from '../../support/finalize.js';
import { checkCoverage, joinByHeader, joinCallByToolCalls } from '../../../src/transforms/capture/coverage.js';
import { withLazyContext } from '../../../src/schemas/call-context.js';
import { recordExamples } from '../../support/record-examples.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('coverage');
const base = recordExamples.call as Call;
// As the proxy writes them: not attributed yet.
const call = (seq: number, id: string | null, extra: Partial<Call> = {}): Call => ({ ...base, call_id: `c-${seq}`, seq, response_id: id, tool_refs: [], participant_id: null, identity_status: 'unattributed', ...extra });
const person = (participant: string, ids: string[], extra: Partial<ParticipantUsage> = {}): ParticipantUsage => ({
  participant, role: 'root', native_id: participant, parent: null, spawn_tool_call_id: null, depth: 0,
  tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 }, messages: ids.length, message_ids: ids,
  status: 'completed', status_source: 'main.jsonl:3', cost_usd: null, cost_note: null, reason: null, ...extra,
});

describe('coverage of native outputs (seeds/000)', () => {
  it('per_id: every native output id must be a captured call of that participant', () => {
    const people = [person('root', ['m1', 'm2'])];
    const ok = checkCoverage(attributeCalls([call(0, 'm1'), call(1, 'm2')], people), people, { method: 'per_id' });
    expect(ok).toMatchObject({ status: 'verified', expected: 2, matched: 2, missing: [] });
    const short = checkCoverage(attributeCalls([call(0, 'm1')], people), people, { method: 'per_id' });
    expect(short).toMatchObject({ status: 'mismatch', expected: 2, matched: 1, missing: ['root: m2'] });
  });

  it('count: compares completed attributed calls per participant, and says it is the weaker check', () => {
    const people = [person('session:a', []), person('session:b', [], { role: 'child', parent: 'session:a', depth: 1 })];
    const calls = joinByHeader(
      [call(0, 'x1', { native_identity: { session_id: 'A' } }), call(1, 'x2', { native_identity: { session_id: 'B' } }), call(2, 'x3', { native_identity: { session_id: 'B' }, execution_status: 'failed' })],
      { field: 'session_id', participants: { A: 'session:a', B: 'session:b' } },
    );
    expect(calls.map((c) => [c.participant_id, c.identity_status])).toEqual([
      ['session:a', 'attributed'],
      ['session:b', 'attributed'],
      ['session:b', 'attributed'],
    ]);
    const agree = checkCoverage(calls, people, { method: 'count', counts: { 'session:a': 1, 'session:b': 1 } });
    expect(agree.status).toBe('verified');
    expect(agree.detail).toContain('weaker than per_id');
    const differ = checkCoverage(calls, people, { method: 'count', counts: { 'session:a': 1, 'session:b': 2 } });
    expect(differ).toMatchObject({ status: 'mismatch', missing: ['session:b: native 2, captured 1'] });
  });

  it('a header value no participant has leaves the call unattributed (never guessed)', () => {
    const [c] = joinByHeader([call(0, 'x1', { native_identity: { session_id: 'Z' }, identity_status: 'unattributed' })], { field: 'session_id', participants: { A: 'session:a' } });
    expect(c!.identity_status).toBe('unattributed');
    expect(c!.participant_id).toBeNull();
  });

  it('tool-call ids: a call is the participant whose records hold the ids it emitted or answers; ids of two decide nothing', () => {
    const join = { owners: { call_a: 'session:a', call_b: 'session:b' }, source: 'state.db (messages)' };
    const refs = (id: string) => [{ id, name: 'read_file' }];
    const input = (id: string) => ({ messages: [{ role: 'assistant', tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{}' } }] }, { role: 'tool', tool_call_id: id, content: 'ok' }] });
    const answers = (id: string) => withLazyContext(call(3, 'x4', { protocol: 'openai-chat-completions' }), Buffer.from(JSON.stringify(input(id))), 'test');
    const joined = [call(0, 'x1', { tool_refs: refs('call_a') }), answers('call_b'), call(1, 'x2', { tool_refs: refs('call_zz') }), call(2, 'x3', { tool_refs: [...refs('call_a'), ...refs('call_b')] })].map((c) => joinCallByToolCalls(c, join));
    expect(joined.map((c) => [c.participant_id, c.identity_status])).toEqual([
      ['session:a', 'attributed'],
      ['session:b', 'attributed'],
      [null, 'unattributed'],
      [null, 'unattributed'],
    ]);
    expect(joined[0]!.status_reasons.identity_status).toBe('it emitted tool call call_a, which state.db (messages) records under session:a');
    expect(joined[1]!.status_reasons.identity_status).toBe('it answers tool call call_b, which state.db (messages) records under session:b');
    expect(joined[3]!.status_reasons.identity_status).toBe('its tool-call ids are recorded under session:a and session:b (state.db (messages)): not attributed');
  });

  it('none: recorded as unverified with the reason', () => {
    expect(checkCoverage([], [person('root', [])], { method: 'none', reason: 'DeepSeek writes no output ids' })).toEqual({
      method: 'none', status: 'unverified', expected: 0, matched: 0, missing: [], detail: 'DeepSeek writes no output ids',
    });
  });

  it('a mismatch keeps the published capture partial, and the manifest says why', async () => {
    const m = await finalizeAttributed({
      dir: join(tmp.path, 'mismatch'), calls: [call(0, 'm1')], participants: [person('root', ['m1', 'm2'])],
      harness: { name: 'claude-code', version: 't' }, capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: false },
      attempt: 1, scope: 's', debugRetention: 'off',
    });
    expect(m.capture_status).toBe('partial');
    expect(m.coverage).toMatchObject({ method: 'per_id', status: 'mismatch', missing: ['root: m2'] });
    expect(checkValue(Manifest, m)).toEqual([]);
    expect(JSON.stringify(checkValue(Manifest, { ...m, capture_status: 'complete' }))).toContain('native outputs and captured calls do not match');
  });

  it('attribution keeps the request body exactly as sent (no re-serialization on the way to calls.jsonl)', async () => {
    const text = '{"model":"m","messages":[{"role":"user","content":"1.0 and \\u00e9"}]}';
    const c = withLazyContext(call(0, 'm1'), Buffer.from(text), 'test');
    await finalizeAttributed({
      dir: join(tmp.path, 'verbatim'), calls: [c], participants: [person('root', ['m1'])],
      harness: { name: 'claude-code', version: 't' }, capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: false },
      attempt: 1, scope: 's', debugRetention: 'off',
    });
    expect(await readFile(join(tmp.path, 'verbatim', 'calls.jsonl'), 'utf8')).toContain(`"context":${text}}`);
  });
});
