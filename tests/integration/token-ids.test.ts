/**
 * A model config's `token_ids` through the real recording proxy to the scripted model served on its own port in vLLM's
 * shape: the proxy writes `return_token_ids` and `logprobs` into each Chat Completions body (content-length to match,
 * a large streamed body too), and the call records exactly the ids and log-probabilities the server sent, streamed and
 * not; the continuity audit finds a deliberately rewritten history at the call and token where it was rewritten.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKEN_ID_FIELDS } from '../../src/pipelines/collect/models.js';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import type { Call } from '../../src/schemas/index.js';
import { startScriptedModel } from '../../src/sources/scripted-model/index.js';
import { completionIds, promptIds } from '../../src/sources/scripted-model/token-ids.js';
import { TokenContinuity, expandedPrompt, sharedPrefix } from '../../src/transforms/capture/token-continuity.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('token-ids');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function through(name: string, bodies: Json[], fields: Json = TOKEN_ID_FIELDS, statuses: number[] = bodies.map(() => 200)): Promise<{ calls: Call[]; raw: Json[] }> {
  const model = await startScriptedModel();
  cleanups.push(() => model.close());
  const outDir = join(tmp.path, name);
  const { proxy, done } = await startProxyPipeline({ upstream: model.url, upstreamBodyFields: fields, outDir, wireTrace: 'off', streamRequestBodiesOver: 2048 });
  const raw: Json[] = [];
  for (const [i, body] of bodies.entries()) {
    const res = await request(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.statusCode).toBe(statuses[i]);
    const text = await res.body.text();
    raw.push(body.stream ? { sse: text } : (JSON.parse(text) as Json));
  }
  await proxy.close();
  await done;
  const calls = (await readFile(join(outDir, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
  return { calls, raw };
}

const conversation: Json[] = [{ role: 'user', content: '[HELLO] hi' }];

describe('token ids from a vLLM-shaped server, through the recording proxy', () => {
  it('unstreamed and streamed: the fields reach the server, the call holds exactly what it sent', async () => {
    const big = 'x'.repeat(5000); // past streamBodiesOver: the body is streamed through the proxy, the fields still first
    const { calls, raw } = await through('both', [
      { model: 'open', messages: conversation },
      { model: 'open', stream: true, messages: conversation },
      { model: 'open', stream: true, messages: [{ role: 'system', content: big }, ...conversation] },
    ]);
    expect(calls).toHaveLength(3);
    for (const c of calls) expect(c.context).toMatchObject({ return_token_ids: true, logprobs: true });
    // Unstreamed: as the body had them.
    const whole = raw[0]!;
    expect(calls[0]!.token_ids).toEqual({ prompt: whole.prompt_token_ids, completion: whole.choices[0].token_ids });
    expect(calls[0]!.logprobs).toEqual(whole.choices[0].logprobs);
    expect((calls[0]!.output as Json).prompt_token_ids).toBeUndefined();
    // Streamed: what the server computes from the body it got, joined from every chunk.
    for (const c of calls.slice(1)) {
      const body = c.context as Json;
      expect(c.token_ids!.prompt).toEqual(promptIds(body));
      expect(c.token_ids!.completion).toEqual(completionIds((c.output as Json).choices[0].message));
      expect(c.logprobs!.content).toHaveLength(c.token_ids!.completion!.length);
      expect(c.capture_status).toBe('complete');
    }
    expect(calls[1]!.token_ids).toEqual(calls[0]!.token_ids); // the same conversation: the same ids either way
  });

  it("SGLang's shape (its own request fields, unstreamed): the choice's prompt ids and meta_info's [logprob, id, text] become the call's ids and log-probabilities; streamed, SGLang's 400 is recorded", async () => {
    const sglang = { return_prompt_token_ids: true, return_meta_info: true, logprobs: true };
    const { calls, raw } = await through('sglang', [{ model: 'open', messages: conversation, ...sglang }, { model: 'open', stream: true, messages: conversation, ...sglang }], {}, [200, 400]);
    const choice = raw[0]!.choices[0] as Json;
    expect(choice.prompt_token_ids).toEqual(promptIds(calls[0]!.context as Json));
    expect(calls[0]!.token_ids).toEqual({ prompt: choice.prompt_token_ids, completion: choice.meta_info.output_token_logprobs.map((e: unknown[]) => e[1]) });
    // The OpenAI-shaped logprobs win where both came; meta_info keeps what was not moved.
    expect(calls[0]!.logprobs).toEqual(choice.logprobs);
    const kept = (calls[0]!.output as Json).choices[0];
    expect([kept.prompt_token_ids, kept.logprobs, kept.meta_info.output_token_logprobs]).toEqual([undefined, undefined, undefined]);
    expect(kept.meta_info).toMatchObject({ prompt_tokens: choice.prompt_token_ids.length, weight_version: 'default' });
    expect(calls[0]!.capture_status).toBe('complete');
    // Streamed: SGLang refuses its fields; the call is an upstream error with its message, no ids.
    expect(calls[1]!.http_status).toBe(400);
    expect(calls[1]!.token_ids).toBeUndefined();
    expect(calls[1]!.status_reasons.execution_status).toBe('HTTP 400 (BadRequestError: return_prompt_token_ids is not supported with streaming. Please set stream=false when using return_prompt_token_ids=true.)');
    expect(calls[1]!.errors).toEqual([]);
  });

  it('the continuity audit: a follow-up re-sending the answer as it was continues; one whose history was rewritten breaks at the rewritten token', async () => {
    const first = await through('first', [{ model: 'open', messages: conversation }]);
    const answer = (first.calls[0]!.output as Json).choices[0].message as Json;
    const faithful = { model: 'open', messages: [...conversation, answer, { role: 'user', content: '[HELLO] again' }] };
    const rewritten = { model: 'open', messages: [...conversation, { ...answer, content: `${answer.content} (edited)` }, { role: 'user', content: '[HELLO] again' }] };
    const follow = await through('follow', [faithful, rewritten]);
    const audit = new TokenContinuity();
    const agent = (c: Call, call_id: string): Call => ({ ...c, call_id, participant_id: 'p' });
    const [a, b, c] = [agent(first.calls[0]!, 'c1'), agent(follow.calls[0]!, 'c2'), agent(follow.calls[1]!, 'c3')];
    for (const x of [a, b]) audit.observe(x);
    audit.observe({ ...c, participant_id: 'p' });
    const result = audit.finish();
    expect(result).toMatchObject({ calls_with_ids: 3, checked: 2, continuous: 1 });
    const before = [...a.token_ids!.prompt!, ...a.token_ids!.completion!];
    expect(b.token_ids!.prompt!.slice(0, before.length)).toEqual(before); // the faithful follow-up holds the first call whole
    // The rewritten one breaks where its re-sent answer's text first differs: inside the first answer's ids.
    const previous = [...b.token_ids!.prompt!, ...b.token_ids!.completion!];
    const at = sharedPrefix(promptIds(rewritten), previous);
    expect(at).toBeGreaterThanOrEqual(a.token_ids!.prompt!.length);
    expect(at).toBeLessThan(before.length);
    expect(result.breaks).toEqual([{ participant_id: 'p', call_id: 'c3', previous_call_id: 'c2', at_token: at, expected: previous[at], found: promptIds(rewritten)[at], reason: "history rewritten: the previous answer's text is re-sent changed" }]);
    // Stored compressed, expanded back exactly.
    const stored = audit.compressed(b);
    expect(stored.token_ids!.prompt_prefix).toEqual({ call_id: 'c1', length: before.length });
    expect(expandedPrompt(stored.token_ids!, (id) => (id === 'c1' ? before : undefined))).toEqual(b.token_ids!.prompt);
  });
});
