import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCodeToActf } from '../../../src/harnesses/opencode/actf.js';
import { openCodeNativeCapture } from '../../../src/harnesses/opencode/native-capture.js';
import { openCodeParticipants } from '../../../src/harnesses/opencode/participants.js';
import { readOpenCodeStore } from '../../../src/harnesses/opencode/store.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Actf, checkValue, type Call } from '../../../src/schemas/index.js';
import { checkCoverage, joinByHeader } from '../../../src/transforms/capture/coverage.js';
import { recordExamples } from '../../support/record-examples.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('opencode');
// The lab run of the real opencode 1.18.33 (shared/lab/opencode): its database with the -wal file that holds most of it.
const lab = join(repoRoot, 'tests/fixtures/opencode/lab');
const db = join(lab, 'opencode.db');
const requests = readFileSync(join(lab, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);

describe('OpenCode store (SQLite, WAL)', () => {
  it('reads the sessions, messages and parts through SQLite (the -wal file included)', () => {
    const store = readOpenCodeStore(db);
    expect(store.sessions.map((s) => [s.parentId === null ? 'root' : 'child', s.agent])).toEqual([
      ['root', 'build'],
      ['child', 'general'],
    ]);
    expect(store.messages).toHaveLength(6);
    expect(store.parts).toHaveLength(14);
  });

  it('participants: the task tool call spawned the child; tokens equal what the server sent for each session', () => {
    const [root, child] = openCodeParticipants(readOpenCodeStore(db));
    expect(child).toMatchObject({ role: 'child', parent: root!.participant, spawn_tool_call_id: 'call_0002', depth: 1, messages: 2, status: 'completed' });
    // Summed from the assistant messages, they agree with OpenCode's own per-session aggregates.
    const store = readOpenCodeStore(db);
    for (const p of [root!, child!]) {
      const row = store.sessions.find((x) => x.id === p.native_id)!.row;
      expect({ input: p.tokens.input, output: p.tokens.output, reasoning: p.tokens.reasoning, cache_read: p.tokens.cache_read, cache_creation: p.tokens.cache_creation }).toEqual({
        input: row.tokens_input, output: row.tokens_output, reasoning: row.tokens_reasoning, cache_read: row.tokens_cache_read, cache_creation: row.tokens_cache_write,
      });
    }
    expect(root!.tokens).toMatchObject({ input: 5061, output: 72 });
    expect(child!.tokens).toMatchObject({ input: 5020, output: 59 });
  });

  it('coverage by count: calls join sessions by x-session-id; the title request is not counted', () => {
    const store = readOpenCodeStore(db);
    const native = openCodeNativeCapture(store, '1.18.33');
    const base = recordExamples.call as Call;
    const calls = requests.map((r, i) => ({ ...base, call_id: `c-${i}`, seq: i, response_id: `chatcmpl-${i}`, participant_id: null, identity_status: 'unattributed', execution_status: 'completed', native_identity: { session_id: r.headers['x-session-id'] }, context: r.body }) as Call);
    const joined = joinByHeader(calls, native.headerJoin!);
    expect(joined.every((c) => c.identity_status === 'attributed')).toBe(true);
    const coverage = checkCoverage(joined, native.participants, native.outputs);
    expect(coverage).toMatchObject({ method: 'count', status: 'verified', expected: 4, matched: 4 });
    expect(coverage.detail).toContain('1 calls not counted');
    // One assistant message fewer in the store than calls that could make one: a mismatch, said per session.
    const short = checkCoverage(joined.slice(0, 4), native.participants, native.outputs);
    expect(short).toMatchObject({ status: 'mismatch', missing: [`${native.participants[0]!.participant}: native 2, captured 1`] });
  });

  it('ACTF of the root session: the task call and its result, no sub-agent step; SFT validates', async () => {
    const store = readOpenCodeStore(db);
    const actf = openCodeToActf(store, store.sessions[0]!.id);
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(actf.steps.map((s) => [s.assistant_content.tool_calls.map((t) => t.name), s.stop_reason])).toEqual([
      [['task'], 'tool_calls'],
      [[], 'stop'],
    ]);
    expect(actf.steps[0]!.observation[0]!.content).toContain('<task_result>');
    const out = join(tmp.path, 'converted');
    const [s] = await convertNative({ harness: 'opencode', native: db, out, keepThinking: true });
    expect(s!.participants).toHaveLength(2);
    // Without the wire the tools are unknown, so the SFT says why instead of inventing a schema.
    expect(s!.sft.status).toBe('unavailable');
    const trace = readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(trace).toHaveLength(2 + 6 + 14);
    expect(new Set(trace.map((t) => t.schema))).toEqual(new Set(['roller.opencode-events/v1']));
  });
});
