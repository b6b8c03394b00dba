/**
 * Token ids through a real harness: the Pi CLI on the scripted model answering in vLLM's shape (`token_ids` in
 * --model-config), the scripted model served on its own port as a provider's API and by roller embedded. Every call
 * holds the ids and log-probabilities the server computed from the very body it got; the second call of an agent is
 * stored as its prefix shared with the first plus the rest, and the audit says it continued. The lock records it; a
 * protocol that cannot carry it, and a run without --capture-calls, are refused before anything runs. The rl export is
 * read back by hyparquet, and by `datasets` and pyarrow as RL trainers load it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Call, Lock, Manifest } from '../../src/schemas/index.js';
import { completionIds, promptIds } from '../../src/sources/scripted-model/token-ids.js';
import { expandedPrompt } from '../../src/transforms/capture/token-continuity.js';
import { info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { filesHolding } from '../support/files-holding.js';
import { repoRoot } from '../support/paths.js';
import { pythonReaders } from '../support/python-readers.js';
import { SERVED_MODEL, useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const execFileAsync = promisify(execFile);
const tmp = useTempDir('token-ids');
const provider = useScriptedProvider(tmp);

/** Every row of a Parquet directory's files, read with hyparquet (not the writer). */
async function parquetRows(dir: string): Promise<Json[]> {
  const rows: Json[] = [];
  for (const n of readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort()) {
    const bytes = readFileSync(join(dir, n));
    rows.push(...((await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer })) as Json[]));
  }
  return rows;
}

describe('token ids from a vLLM-shaped model, through the real Pi CLI', () => {
  let python = '';
  beforeAll(async () => {
    python = await pythonReaders(); // made once per machine (tests/e2e/python-readers.test.ts shares it)
  }, 20 * 60_000);

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
    expect(info(run).summary.training?.token_continuity).toEqual({ samples: 2, checked: 1, continuous: 1, breaks: 0 });
    expect((await roller(['usage', run])).stdout).toContain("token ids: 1 of 1 prompts continued their agent's previous call");
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
    // The rl export: one row per call, prompts expanded, a loss mask over the completion, the continuity finding.
    const rl = await roller(['export', run, '--format', 'rl']);
    expect(rl.code, rl.stderr).toBe(0);
    const rows = await parquetRows(join(run, 'rl', 'rollouts'));
    const allCalls = info(run).samples.flatMap((x) => readJsonl(join(run, x.path, 'capture', 'attempt-0001', 'calls.jsonl')) as unknown as Call[]);
    expect(rows.map((r) => r.call_id)).toEqual(allCalls.map((c) => c.call_id));
    const second = rows.find((r) => r.call_id === writeCalls[1]!.call_id)!;
    expect(second.prompt_token_ids.map(Number)).toEqual(agentSteps[1]!.metrics.prompt_token_ids);
    expect(second.completion_token_ids.map(Number)).toEqual(writeCalls[1]!.token_ids!.completion);
    expect(second.loss_mask).toEqual(writeCalls[1]!.token_ids!.completion!.map(() => 1));
    expect(second.logprobs).toEqual(writeCalls[1]!.logprobs!.content.map((e) => e.logprob));
    expect([second.continuity, rows.find((r) => r.call_id === writeCalls[0]!.call_id)!.continuity]).toEqual(['continuous', 'first']);
    expect(second).toMatchObject({ task_id: 'write', role: 'root', status: 'ok', harness: 'pi' });
    // As RL trainers load it (datasets, pyarrow): the same rows, ids as int32 lists.
    const read = JSON.parse((await execFileAsync(python, [join(repoRoot, 'tests', 'python', 'read_rl.py'), join(run, 'rl', 'rollouts')], { maxBuffer: 64 << 20 })).stdout) as Json;
    expect(read.schema).toMatchObject({ prompt_token_ids: 'list<element: int32 not null>', completion_token_ids: 'list<element: int32 not null>', logprobs: 'list<element: double not null>' });
    expect(read.features.prompt_token_ids).toBe("List(Value('int32'))");
    expect(read.equal_to_pyarrow).toBe(true);
    expect(read.rows).toEqual(rows.map((r) => ({ call_id: r.call_id, prompt_token_ids: r.prompt_token_ids, completion_token_ids: r.completion_token_ids, logprobs: r.logprobs, loss_mask: r.loss_mask, continuity: r.continuity })));
    // Decoded again from the archived wire log, the calls (ids, prefixes, log-probabilities) are the same bytes.
    const again = join(out, 'again');
    expect((await roller(['reprocess', run, '--output', again, '--from-wire'])).code).toBe(0);
    for (const row of info(run).samples) {
      const calls = join(row.path, 'capture', 'attempt-0001', 'calls.jsonl');
      expect(readFileSync(join(again, calls), 'utf8')).toBe(readFileSync(join(run, calls), 'utf8'));
    }
  }, 5 * 60_000);

  it("OpenCode: its title request (an auxiliary call) carries ids too but stays outside the agent's chain, which continues", async () => {
    const models = join(tmp.path, 'models.json');
    const tasks = join(tmp.path, 'write.jsonl');
    writeFileSync(tasks, JSON.stringify({ id: 'write', prompt: '[WRITE] write hello.txt' }));
    const out = join(tmp.path, 'opencode');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'opencode', '--model', 'scripted/default', '--model-config', models, '--output', out, '--run-name', 'o']);
    expect(r.code, r.stderr).toBe(0);
    const row = info(join(out, 'o')).samples[0]!;
    const dir = join(out, 'o', row.path, 'capture', 'attempt-0001');
    const calls = readJsonl(join(dir, 'calls.jsonl')) as unknown as Call[];
    expect(calls.filter((c) => c.token_ids?.prompt)).toHaveLength(3);
    const full = new Map<string, number[]>();
    for (const c of calls) {
      const prompt = expandedPrompt(c.token_ids!, (id) => full.get(id))!;
      expect(prompt).toEqual(promptIds(c.context as Json));
      full.set(c.call_id, [...prompt, ...c.token_ids!.completion!]);
    }
    expect(readJson<Manifest>(join(dir, 'manifest.json')).token_continuity).toMatchObject({ calls_with_ids: 2, checked: 1, continuous: 1, breaks: [] });
  }, 5 * 60_000);

  it('a provider API (roller scripted-model served on its own port, with a key) through --model-config: Pi records the ids it sent, the key in no file', async () => {
    const models = join(tmp.path, 'provider-token-models.json');
    writeFileSync(models, JSON.stringify({ models: { 'api/pi': { api_base: `${provider.url}/v1`, api_key_env: 'ROLLER_E2E_API_KEY', model: SERVED_MODEL, token_ids: true } } }));
    const tasks = join(tmp.path, 'provider-write.jsonl');
    writeFileSync(tasks, JSON.stringify({ id: 'write', prompt: '[WRITE] write hello.txt' }));
    const out = join(tmp.path, 'provider');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'pi', '--model', 'api/pi', '--model-config', models, '--output', out, '--run-name', 'p'], { env: provider.env });
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'p');
    const row = info(run).samples[0]!;
    const dir = join(run, row.path, 'capture', 'attempt-0001');
    const calls = readJsonl(join(dir, 'calls.jsonl')) as unknown as Call[];
    expect(calls).toHaveLength(2);
    const full = new Map<string, number[]>();
    for (const c of calls) {
      expect(c.context).toMatchObject({ return_token_ids: true, logprobs: true, model: SERVED_MODEL });
      const prompt = expandedPrompt(c.token_ids!, (id) => full.get(id))!;
      expect(prompt).toEqual(promptIds(c.context as Json));
      expect(c.token_ids!.completion).toEqual(completionIds((c.output as Json).choices[0].message));
      full.set(c.call_id, [...prompt, ...c.token_ids!.completion!]);
    }
    expect(readJson<Manifest>(join(dir, 'manifest.json')).token_continuity).toMatchObject({ checked: 1, continuous: 1, breaks: [] });
    expect(readJson<Lock>(join(run, 'lock.json')).models).toMatchObject({ 'api/pi': { token_ids: true } });
    expect(filesHolding(provider.key, [run])).toEqual([]);
  }, 5 * 60_000);

  it('the rl export of a run without token ids is refused with what to change, nothing written', async () => {
    const tasks = join(tmp.path, 'plain.jsonl');
    writeFileSync(tasks, JSON.stringify({ id: 'hello', prompt: '[HELLO] hi' }));
    const out = join(tmp.path, 'plain');
    expect((await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'pi', '--output', out, '--run-name', 'p'])).code).toBe(0);
    const r = await roller(['export', join(out, 'p'), '--format', 'rl']);
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('no model call of this run carries token ids, so there are no RL rollouts to export (nothing was written). Collect from an open-model server (vLLM, SGLang) with "token_ids": true')]);
    expect(existsSync(join(out, 'p', 'rl'))).toBe(false);
  }, 3 * 60_000);

  it('refused before anything runs: without --capture-calls; with a harness that calls the model in Messages', async () => {
    const models = join(tmp.path, 'models.json');
    const tasks = join(tmp.path, 'tasks.jsonl');
    const without = await roller(['collect', '--tasks', tasks, '--harness', 'pi', '--model', 'scripted/default', '--model-config', models, '--output', join(tmp.path, 'no'), '--run-name', 'x']);
    expect([without.code, without.stderr]).toEqual([2, expect.stringContaining('token ids (token_ids), which are recorded per call in calls.jsonl: pass --capture-calls')]);
    const messages = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models, '--output', join(tmp.path, 'no'), '--run-name', 'y']);
    expect([messages.code, messages.stderr]).toEqual([2, expect.stringContaining('only Chat Completions carries; claude-code calls it in anthropic-messages')]);
  });
});
