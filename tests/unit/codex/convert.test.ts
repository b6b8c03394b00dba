import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Actf, checkValue } from '../../../src/schemas/index.js';
import { expectGolden, stableJson } from '../../support/golden.js';
import { repoRoot } from '../../support/paths.js';
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
    // One file given: only that thread is read, so the child is not part of this conversion.
    expect(s!.participants.map((p) => p.role)).toEqual(['root']);
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
