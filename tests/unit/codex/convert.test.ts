import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Actf, checkValue } from '../../../src/schemas/index.js';
import { expectGolden, stableJson, stableJsonl } from '../../support/golden.js';
import { repoRoot } from '../../support/paths.js';
import { codexTokensOf } from '../../support/e2e.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('codex-convert');
const lab = join(repoRoot, 'tests/fixtures/codex/lab');
const served = new Map(
  (JSON.parse(await readFile(join(lab, 'responses.json'), 'utf8')) as Json[]).map((r) => [r.response_summary.respId as string, r.response_summary.usage as Json]),
);

describe('roller convert --harness codex: the lab rollouts (real CLI 0.171.0)', () => {
  it('every thread is a participant whose tokens equal the usage the server sent for its responses', async () => {
    const sessions = await convertNative({ harness: 'codex', native: lab, out: join(tmp.path, 'all'), keepThinking: true });
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    let checked = 0;
    for (const s of sessions) {
      for (const p of s.participants) {
        const usages = p.message_ids.map((id) => served.get(id));
        expect(usages.every(Boolean), `every response of ${p.participant} was served`).toBe(true);
        const sum = (f: (u: Json) => number) => (usages as Json[]).reduce((a, u) => a + f(u), 0);
        expect(p.tokens).toEqual({
          input: sum((u) => u.input_tokens - u.input_tokens_details.cached_tokens),
          cache_creation: 0,
          cache_read: sum((u) => u.input_tokens_details.cached_tokens),
          output: sum((u) => u.output_tokens),
          reasoning: sum((u) => u.output_tokens_details.reasoning_tokens),
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  it('a v1 tree: the child links to the spawn_agent call by evidence, and the root ACTF holds only the root thread', async () => {
    const [s] = await convertNative({ harness: 'codex', native: join(lab, 'sessions/2026/11/30/rollout-2026-11-30T06-53-42-01a22b3b-143a-7721-b9f8-abb58f73e2e2.jsonl'), out: join(tmp.path, 'tree'), keepThinking: true });
    // One file given: only that thread is read; the child its spawn names is listed as missing, never dropped.
    expect(s!.participants.map((p) => [p.role, p.status])).toEqual([['root', 'completed'], ['child', 'missing']]);
    expect(s!.participants[1]).toMatchObject({ spawn_tool_call_id: 'call_mx2wwhjj0001', depth: 1, reason: expect.stringContaining('its rollout is not among the files read') });
    const all = await convertNative({ harness: 'codex', native: lab, out: join(tmp.path, 'tree-all'), keepThinking: true });
    const tree = all.find((x) => x.sessionId === '01a22b3b-143a-7721-b9f8-abb58f73e2e2')!;
    const [root, child] = tree.participants;
    expect(child).toMatchObject({ role: 'child', parent: root!.participant, spawn_tool_call_id: 'call_mx2wwhjj0001', depth: 1, status: 'completed' });
    const actf = JSON.parse(await readFile(join(tree.dir, 'trace_ACTF.json'), 'utf8')) as Json;
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(actf.steps.map((st: Json) => st.native_ids.response_id)).toEqual(root!.message_ids);
    expect(actf.steps[0].assistant_content.tool_calls[0]).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' });
    expect(actf.system_prompt).toContain('Codex CLI');
    // Codex never infers tool schemas: without the captured requests, SFT is unavailable and says why.
    expect(tree.sft).toEqual({ status: 'unavailable', reason: 'the trajectory calls tools but no tools schema was captured' });
    await expectGolden(join(repoRoot, 'tests/golden/codex/lab-v1-tree/trace_ACTF.json'), stableJson(actf));
    await expectGolden(join(repoRoot, 'tests/golden/codex/lab-v1-tree/usage.json'), stableJson(JSON.parse(await readFile(join(tree.dir, 'usage.json'), 'utf8'))));
  });
});

describe('roller convert --harness codex: a real multi_agent v2 run (warm fork)', () => {
  const v2 = join(repoRoot, 'tests/fixtures/codex/v2-run');
  const calls = async () => (await readFile(join(v2, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Json);

  it("the forked child's tokens are only what the server sent to the child; the spawn is linked by task_name", async () => {
    const [s] = await convertNative({ harness: 'codex', native: v2, out: join(tmp.path, 'v2'), keepThinking: true, wire: join(v2, 'calls.jsonl') });
    const sent = await calls();
    for (const p of s!.participants) {
      const mine = sent.filter((c) => c.native_identity.thread_id === p.native_id).map((c) => c.usage.reported as Json);
      expect(p.tokens, p.participant).toEqual(codexTokensOf(mine));
    }
    const child = s!.participants.find((p) => p.role === 'child')!;
    expect(child).toMatchObject({ depth: 1, status: 'completed', reason: null });
    expect(child.spawn_tool_call_id).toMatch(/^call_/);
    const actf = JSON.parse(await readFile(join(s!.dir, 'trace_ACTF.json'), 'utf8')) as Json;
    const root = s!.participants.find((p) => p.role === 'root')!;
    expect(actf.steps.map((st: Json) => st.native_ids.response_id)).toEqual(root.message_ids); // no child step
    expect(s!.sft.status).toBe('ok');
  });

  it('a token_usage_record replayed in the fork prefix (before subagent_history_start_ordinal) is not counted', async () => {
    const { cp, readdir, writeFile } = await import('node:fs/promises');
    const copy = join(tmp.path, 'v2-prefix');
    await cp(join(v2, 'sessions'), join(copy, 'sessions'), { recursive: true });
    const files = (await readdir(join(copy, 'sessions'), { recursive: true })).filter((f) => f.endsWith('.jsonl')).map((f) => join(copy, 'sessions', f));
    const childFile = files.find((f) => f.includes('1708'))!;
    const rootFile = files.find((f) => !f.includes('1708'))!;
    const before = await convertNative({ harness: 'codex', native: copy, out: join(tmp.path, 'prefix-before'), keepThinking: true });
    const parentRecord = (await readFile(rootFile, 'utf8')).split('\n').find((l) => l.includes('"token_usage_record"'))!;
    const lines = (await readFile(childFile, 'utf8')).split('\n');
    const at = lines.findIndex((l) => l.includes('"turn_aborted"'));
    const replayed: Json = { ...(JSON.parse(parentRecord) as Json), ordinal: 12 };
    lines.splice(at, 0, JSON.stringify(replayed));
    await writeFile(childFile, lines.join('\n'));
    const after = await convertNative({ harness: 'codex', native: copy, out: join(tmp.path, 'prefix-after'), keepThinking: true });
    const child = (r: typeof before) => r[0]!.participants.find((p) => p.role === 'child')!;
    expect(child(after).tokens).toEqual(child(before).tokens);
    expect(child(after).message_ids).toEqual(child(before).message_ids);
    // The reader did see it (one more occurrence in the merged trace): it was excluded, not missed.
    const count = async (dir: string) => (await readFile(join(tmp.path, dir, 'trace.jsonl'), 'utf8')).split(String(replayed.payload.response_id)).length - 1;
    expect(await count('prefix-after')).toBe((await count('prefix-before')) + 1);
  });
});

describe('Codex spawns and SFT rules', () => {
  const lab = join(repoRoot, 'tests/fixtures/codex/lab');
  it('a spawn whose child rollout was not read is listed as not_collected, never dropped', async () => {
    const rootOnly = join(lab, 'sessions/2026/11/30/rollout-2026-11-30T06-53-42-01a22b3b-143a-7721-b9f8-abb58f73e2e2.jsonl');
    const [s] = await convertNative({ harness: 'codex', native: rootOnly, out: join(tmp.path, 'not-collected'), keepThinking: true });
    const usage = JSON.parse(await readFile(join(s!.dir, 'usage.json'), 'utf8')) as Json;
    expect(usage.spawns_without_participant).toEqual([
      expect.objectContaining({ tool_call_id: 'call_mx2wwhjj0001', target: '01a22b3b-1941-7241-93cc-4715a620a477', status: 'not_collected' }),
    ]);
  });

  it('changing tool definitions between requests make SFT unavailable, with the reason', async () => {
    const { codexSftBlocker } = await import('../../../src/harnesses/codex/sft-rules.js');
    const base = { schema_version: 'roller.actf/v1', system_prompt: '', system_prompt_source: 'none', tools: [], tools_source: 'wire', steps: [], timing: { started_at: null, finished_at: null, duration_ms: null } } as const;
    const t1 = [{ type: 'function', name: 'exec_command', parameters: {} }];
    expect(codexSftBlocker({ ...base, tools_capture: [{ seq: 0, tools: t1 }, { seq: 1, tools: t1 }] } as never)).toBeUndefined();
    expect(codexSftBlocker({ ...base, tools_capture: [{ seq: 0, tools: t1 }, { seq: 3, tools: [...t1, { type: 'function', name: 'new_tool', parameters: {} }] }] } as never)).toBe(
      'tool definitions changed between requests (request seq 0 vs 3); one static tools list would misstate them',
    );
  });

  it.each([
    ['tool_search_output', { type: 'tool_search_output', call_id: 'ts_1', tools: [] }],
    ['additional_tools', { type: 'additional_tools', tools: [{ type: 'function', name: 'late_tool', parameters: { type: 'object' } }] }],
  ])('tools loaded through a %s input item (the request, or the rollout) bar the main SFT', async (type, item) => {
    // The real lab session with its captured requests; then the same with the root's second request carrying the item.
    const rollout = join(lab, 'sessions/2026/11/30/rollout-2026-11-30T06-53-42-01a22b3b-143a-7721-b9f8-abb58f73e2e2.jsonl');
    const wire = (await readFile(join(lab, 'wire-tools.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    const [plain] = await convertNative({ harness: 'codex', native: rollout, out: join(tmp.path, `dyn-plain-${type}`), keepThinking: true, wire: join(lab, 'wire-tools.jsonl') });
    expect(plain!.sft.status).toBe('ok');
    const rootCalls = wire.filter((c) => JSON.stringify(c.native_identity ?? {}).includes('01a22b3b-143a-7721-b9f8-abb58f73e2e2'));
    expect(rootCalls.length).toBeGreaterThan(1);
    const edited = wire.map((c) => (c === rootCalls[1] ? { ...c, context: { ...c.context, input: [...((c.context.input as Json[] | undefined) ?? []), item] } } : c));
    const dynWire = join(tmp.path, `dyn-wire-${type}.jsonl`);
    await writeFile(dynWire, edited.map((c) => JSON.stringify(c)).join('\n') + '\n');
    const [dyn] = await convertNative({ harness: 'codex', native: rollout, out: join(tmp.path, `dyn-${type}`), keepThinking: true, wire: dynWire });
    expect(dyn!.sft).toEqual({ status: 'unavailable', reason: expect.stringMatching(new RegExp(`request seq ${rootCalls[1]!.seq} carries a tool_search_output / additional_tools input item`)) });
    const { codexSftBlocker } = await import('../../../src/harnesses/codex/sft-rules.js');
    expect(codexSftBlocker(plain!.actf, [], ['message', type])).toBe(`tools were loaded dynamically (the root rollout holds a ${type} item); one static tools list would misstate what the model saw`);
  });
});

describe('golden: every lab Codex session with the wire (tools from the actual requests)', () => {
  it('trace.jsonl, trace_ACTF.json, trace_SFT.json and the per-thread token table match the reviewed files', async () => {
    const lab = join(repoRoot, 'tests/fixtures/codex/lab');
    const sessions = await convertNative({ harness: 'codex', native: lab, out: join(tmp.path, 'golden-all'), keepThinking: true, wire: join(lab, 'wire-tools.jsonl') });
    expect(sessions).toHaveLength(4);
    for (const s of sessions) {
      const g = join(repoRoot, 'tests/golden/codex/lab', s.sessionId);
      expect(s.sft, s.sessionId).toEqual({ status: 'ok', reason: null });
      await expectGolden(join(g, 'trace.jsonl'), stableJsonl(await readFile(join(s.dir, 'trace.jsonl'), 'utf8')));
      for (const f of ['trace_ACTF.json', 'trace_SFT.json', 'usage.json']) await expectGolden(join(g, f), stableJson(JSON.parse(await readFile(join(s.dir, f), 'utf8'))));
    }
  });
});

describe('a spawn that failed', () => {
  it('is listed with its reason', async () => {
    const { cp, readdir, writeFile } = await import('node:fs/promises');
    const lab = join(repoRoot, 'tests/fixtures/codex/lab');
    const copy = join(tmp.path, 'failed-spawn');
    await cp(join(lab, 'sessions'), join(copy, 'sessions'), { recursive: true });
    const rootFile = (await readdir(join(copy, 'sessions'), { recursive: true })).filter((f) => f.includes('01a22b3b-143a')).map((f) => join(copy, 'sessions', f))[0]!;
    const lines = (await readFile(rootFile, 'utf8')).split('\n').map((l) => {
      if (!l.includes('"function_call_output"') || !l.includes('call_mx2wwhjj0001')) return l;
      const rec = JSON.parse(l) as Json;
      rec.payload.output = 'collab spawn failed: agent limit reached';
      return JSON.stringify(rec);
    });
    await writeFile(rootFile, lines.join('\n'));
    const sessions = await convertNative({ harness: 'codex', native: join(copy, 'sessions'), out: join(tmp.path, 'failed-out'), keepThinking: true });
    const tree = sessions.find((s) => s.sessionId === '01a22b3b-143a-7721-b9f8-abb58f73e2e2')!;
    const usage = JSON.parse(await readFile(join(tree.dir, 'usage.json'), 'utf8')) as Json;
    expect(usage.spawns_without_participant).toEqual([
      expect.objectContaining({ tool_call_id: 'call_mx2wwhjj0001', target: null, status: 'failed', reason: 'the spawn returned no agent: collab spawn failed: agent limit reached' }),
    ]);
    // (This edit leaves the CollabAgentToolCall record that names the child: that evidence still links it.)
    expect(tree.participants.find((p) => p.role === 'child')!.spawn_tool_call_id).toBe('call_mx2wwhjj0001');
  });
});
