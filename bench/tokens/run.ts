/**
 * Token ids at agent scale (issue 64): one agent of 100 calls whose context grows to ~64k tokens, answered in vLLM's
 * shape by the scripted model's tokenizer (real cl100k_base ids). Three figures against limits measured here:
 * - calls.jsonl with token ids (prompts stored as the shared prefix plus the rest) against the same calls without
 *   them: at most 2x the bytes;
 * - the continuity audit over that file, and the rl export of it, against reading and JSON.parse-ing the same file:
 *   at least 0.5x that rate;
 * - peak RSS of each (flat: one id list per agent held).
 *
 *   npm run bench:tokens                  # 100 calls, ~64k tokens
 *   npm run bench:tokens -- --calls 200
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStageContext } from '../../src/core/context.js';
import { finishedSample } from '../../src/pipelines/finished-sample.js';
import type { Call } from '../../src/schemas/call.js';
import type { SampleInfo } from '../../src/schemas/run-info.js';
import { readCallsLazily } from '../../src/sources/archive/calls-reader.js';
import { completionIds, promptIds } from '../../src/sources/scripted-model/token-ids.js';
import { createCallsJsonlSink } from '../../src/sinks/calls-jsonl/sink.js';
import { createRlRolloutsSink } from '../../src/sinks/rl-rollouts/sink.js';
import { TokenContinuity } from '../../src/transforms/capture/token-continuity.js';

type Json = Record<string, any>;

async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const calls = Number(arg('--calls', '100'));
const ROUNDS = Number(arg('--rounds', '5'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const work = mkdtempSync(join(tmpdir(), 'roller-bench-tokens-'));

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
const resetPeak = () => (peak = process.memoryUsage.rss());

/** The agent's calls: each re-sends the whole conversation; ~640 tokens of tool output a turn (~64k at 100). */
function agentCalls(): Call[] {
  const messages: Json[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the failing test in src/.' }];
  const out: Call[] = [];
  for (let i = 0; i < calls; i++) {
    const body = { model: 'open', stream: true, return_token_ids: true, logprobs: true, messages: structuredClone(messages) };
    const answer = { role: 'assistant', content: `Step ${i}: reading the next file.`, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read', arguments: JSON.stringify({ path: `src/file${i}.ts` }) } }] };
    const completion = completionIds(answer);
    out.push({
      schema: 'roller.call/v1', call_id: `c-bench-${String(i).padStart(6, '0')}`, seq: i, protocol: 'openai-chat-completions', method: 'POST', path: '/v1/chat/completions', upstream_path: '/v1/chat/completions',
      started_at: new Date(0).toISOString(), first_byte_at: null, ended_at: null, http_status: 200, participant_id: 'session:bench', native_identity: {}, request_model: 'open', response_model: 'open', response_id: `chatcmpl-${i}`,
      context: body, output: { id: `chatcmpl-${i}`, object: 'chat.completion', model: 'open', choices: [{ index: 0, message: answer, finish_reason: 'tool_calls' }] },
      usage: { reported: null, normalized: null }, tool_refs: [{ id: `call_${i}`, name: 'read' }], response_path: null, dropped_request_headers: [],
      execution_status: 'completed', response_capture_status: 'complete', identity_status: 'attributed', capture_status: 'complete', export_status: 'exportable', status_reasons: {}, errors: [],
      token_ids: { prompt: promptIds(body), completion }, logprobs: { content: completion.map((id, k) => ({ token: String(id), logprob: -(k % 7) / 64 })) },
    });
    messages.push(answer, { role: 'tool', tool_call_id: `call_${i}`, content: `export const value${i} = ${JSON.stringify('x '.repeat(600))};` });
  }
  return out;
}

async function write(path: string, list: Call[]): Promise<number> {
  await createCallsJsonlSink({ path }).consume(fromArray(list), createStageContext());
  return statSync(path).size;
}

/** Reading and JSON.parse-ing every line of the file: the limit. */
function parseRate(path: string): number {
  const t = performance.now();
  const text = readFileSync(path, 'utf8');
  for (const line of text.split('\n')) if (line) JSON.parse(line);
  return statSync(path).size / ((performance.now() - t) / 1000);
}

async function main(): Promise<void> {
  let t = performance.now();
  const list = agentCalls();
  const contextTokens = list.at(-1)!.token_ids!.prompt!.length;
  console.log(`${calls} calls, the last prompt ${contextTokens} tokens: built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const audit = new TokenContinuity();
  for (const c of list) audit.observe(c);
  const stored = list.map((c) => audit.compressed(c));
  const without = await write(join(work, 'without.jsonl'), list.map(({ token_ids: _t, logprobs: _l, ...c }) => c as Call));
  const withIds = await write(join(work, 'calls.jsonl'), stored);
  const ratio = withIds / without;
  console.log(`calls.jsonl: ${(without / 2 ** 20).toFixed(1)} MB without token ids, ${(withIds / 2 ** 20).toFixed(1)} MB with: ${ratio.toFixed(2)}x (limit 2x) ${ratio <= 2 ? 'MET' : 'MISS'}`);
  // Each figure is the median of ROUNDS (a 50 ms measurement moves with one collection of the garbage built above).
  const limit = median(Array.from({ length: ROUNDS }, () => parseRate(join(work, 'calls.jsonl'))));

  resetPeak();
  let found = new TokenContinuity().finish();
  const auditRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    t = performance.now();
    const again = new TokenContinuity();
    for (const c of await readCallsLazily(join(work, 'calls.jsonl'))) again.observe(c);
    auditRates.push(withIds / ((performance.now() - t) / 1000));
    found = again.finish();
  }
  const auditRate = median(auditRates);
  console.log(`continuity audit: ${found.continuous} of ${found.checked} continued; ${(auditRate / 2 ** 20).toFixed(0)} MB/s vs JSON.parse ${(limit / 2 ** 20).toFixed(0)} MB/s: ${(auditRate / limit).toFixed(2)}x (target >= 0.5) ${auditRate / limit >= 0.5 ? 'MET' : 'MISS'}; peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);

  resetPeak();
  const info = { index: 0, task_id: 't', model: 'open', status: 'ok', harness: { name: 'opencode', version: '1' }, runtime: { participants: [] } } as unknown as SampleInfo;
  const sample = { ...finishedSample(join(work, 'run', 'samples', 'm', '0000_t'), info), calls: async function* () { yield* await readCallsLazily(join(work, 'calls.jsonl')); } };
  const rlRates: number[] = [];
  let report = { written: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    t = performance.now();
    report = await createRlRolloutsSink({ output: join(work, `rl-${r}`) }).consume(fromArray([sample]), createStageContext());
    rlRates.push(withIds / ((performance.now() - t) / 1000));
  }
  const rlRate = median(rlRates);
  console.log(`rl export: ${report.written} rows; ${(rlRate / 2 ** 20).toFixed(0)} MB/s vs JSON.parse ${(limit / 2 ** 20).toFixed(0)} MB/s: ${(rlRate / limit).toFixed(2)}x (target >= 0.5) ${rlRate / limit >= 0.5 ? 'MET' : 'MISS'}; peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    clearInterval(sampler);
    if (!process.env.KEEP) rmSync(work, { recursive: true, force: true }); else console.log(work);
  });
