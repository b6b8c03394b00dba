/**
 * Token ids through a real harness: the Pi CLI on the scripted model answering in vLLM's shape (`token_ids` in
 * --model-config), the scripted model served on its own port as a provider's API and by roller embedded. Every call
 * holds the ids and log-probabilities the server computed from the very body it got; the second call of an agent is
 * stored as its prefix shared with the first plus the rest, and the audit says it continued. The lock records it; a
 * protocol that cannot carry it, and a run without --capture-calls, are refused before anything runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Call, Lock, Manifest } from '../../src/schemas/index.js';
import { completionIds, promptIds } from '../../src/sources/scripted-model/token-ids.js';
import { expandedPrompt } from '../../src/transforms/capture/token-continuity.js';
import { info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('token-ids');

describe('token ids from a vLLM-shaped model, through the real Pi CLI', () => {
  it('every call holds the ids the server computed from its body; an agent second call is stored as a shared prefix and continues', async () => {
    const models = join(tmp.path, 'models.json');
    writeFileSync(models, JSON.stringify({ models: { 'scripted/default': { token_ids: true } } }));
    const tasks = join(tmp.path, 'tasks.jsonl');
    writeFileSync(tasks, [{ id: 'hello', prompt: '[HELLO] hi' }, { id: 'write', prompt: '[WRITE] write hello.txt' }].map((t) => JSON.stringify(t)).join('\n'));
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--capture-debug', 'full', '--tasks', tasks, '--harness', 'pi', '--model', 'scripted/default', '--model-config', models, '--output', out, '--run-name', 'ids']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'ids');
    expect((await roller(['validate-run', run])).code).toBe(0);
    expect(readJson<Lock>(join(run, 'lock.json')).models).toEqual({ 'scripted/default': { kind: 'scripted', token_ids: true } });
    for (const row of info(run).samples) {
      const dir = join(run, row.path, 'capture', 'attempt-0001');
      const calls = readJsonl(join(dir, 'calls.jsonl')) as unknown as Call[];
      const full = new Map<string, number[]>();
      for (const c of calls) {
        const body = c.context as Json;
        expect(body).toMatchObject({ return_token_ids: true, logprobs: true, stream: true });
        const prompt = expandedPrompt(c.token_ids!, (id) => full.get(id))!;
        expect(prompt).toEqual(promptIds(body));
        expect(c.token_ids!.completion).toEqual(completionIds((c.output as Json).choices[0].message));
        expect(c.logprobs!.content.map((e) => e.logprob)).toHaveLength(c.token_ids!.completion!.length);
        full.set(c.call_id, [...prompt, ...c.token_ids!.completion!]);
      }
      const manifest = readJson<Manifest>(join(dir, 'manifest.json'));
      const s = sample(run, row);
      if (row.task_id === 'write') {
        expect(calls).toHaveLength(2);
        expect(calls[1]!.token_ids!.prompt_prefix).toEqual({ call_id: calls[0]!.call_id, length: full.get(calls[0]!.call_id)!.length });
        expect(manifest.token_continuity).toMatchObject({ calls_with_ids: 2, checked: 1, continuous: 1, breaks: [] });
        expect(s.runtime.capture).toMatchObject({ token_continuity: { checked: 1, continuous: 1, breaks: 0 } });
      } else expect(manifest.token_continuity).toMatchObject({ calls_with_ids: 1, checked: 0 });
    }
    // ATIF's RL metrics: each agent step's prompt and completion ids and log-probabilities are its call's, expanded.
    expect((await roller(['export', run])).code).toBe(0);
    const write = info(run).samples.find((x) => x.task_id === 'write')!;
    const trajectory = readJson<Json>(join(run, 'atif', write.path.split('/').slice(-2).join('/'), 'trajectory.json'));
    const agentSteps = (trajectory.steps as Json[]).filter((x) => x.source === 'agent');
    const writeCalls = readJsonl(join(run, write.path, 'capture', 'attempt-0001', 'calls.jsonl')) as unknown as Call[];
    expect(agentSteps).toHaveLength(2);
    const first = writeCalls[0]!.token_ids!;
    expect(agentSteps[0]!.metrics).toMatchObject({ prompt_token_ids: first.prompt, completion_token_ids: first.completion, logprobs: writeCalls[0]!.logprobs!.content.map((e) => e.logprob) });
    expect(agentSteps[1]!.metrics.prompt_token_ids).toEqual([...first.prompt!, ...first.completion!, ...writeCalls[1]!.token_ids!.prompt!]);
    // Decoded again from the archived wire log, the calls (ids, prefixes, log-probabilities) are the same bytes.
    const again = join(out, 'again');
    expect((await roller(['reprocess', run, '--output', again, '--from-wire'])).code).toBe(0);
    for (const row of info(run).samples) {
      const calls = join(row.path, 'capture', 'attempt-0001', 'calls.jsonl');
      expect(readFileSync(join(again, calls), 'utf8')).toBe(readFileSync(join(run, calls), 'utf8'));
    }
  }, 5 * 60_000);

  it('refused before anything runs: without --capture-calls; with a harness that calls the model in Messages', async () => {
    const models = join(tmp.path, 'models.json');
    const tasks = join(tmp.path, 'tasks.jsonl');
    const without = await roller(['collect', '--tasks', tasks, '--harness', 'pi', '--model', 'scripted/default', '--model-config', models, '--output', join(tmp.path, 'no'), '--run-name', 'x']);
    expect([without.code, without.stderr]).toEqual([2, expect.stringContaining('token ids (token_ids), which are recorded per call in calls.jsonl: pass --capture-calls')]);
    const messages = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models, '--output', join(tmp.path, 'no'), '--run-name', 'y']);
    expect([messages.code, messages.stderr]).toEqual([2, expect.stringContaining('only Chat Completions carries; claude-code calls it in anthropic-messages')]);
  });
});
