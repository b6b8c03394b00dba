/**
 * vLLM's token fields (`return_token_ids`, `logprobs`) through the Chat Completions decoder: a streamed answer (the
 * prompt's ids on the first chunk, each chunk's slice of the sampled ids and log-probabilities) reassembles into exactly
 * what the unstreamed answer holds, taken out of output into the call's own fields. The answers are the scripted
 * model's vLLM shape: real cl100k_base ids of a ChatML rendering.
 */
import { describe, expect, it } from 'vitest';
import { decode, encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { chatChunks } from '../../../src/sources/scripted-model/encode-openai.js';
import { completionIds, promptIds, withTokenIds } from '../../../src/sources/scripted-model/token-ids.js';
import { createDecoder, decodeSseChunks } from '../../../src/transforms/protocols/index.js';

type Json = Record<string, any>;

const request: Json = {
  model: 'open-model',
  return_token_ids: true,
  logprobs: true,
  top_logprobs: 2,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Read notes.txt' },
  ],
  tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }],
};
const answer = (message: Json): Json =>
  withTokenIds(request, { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'open-model', choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });

describe('token ids and log-probabilities from a vLLM-shaped server', () => {
  const message = { role: 'assistant', content: 'Reading it now — ünïcode too.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } }] };
  const whole = answer(message);

  it('the scripted model sends real BPE ids: the prompt renders the conversation, the completion the answer, usage counts them', () => {
    expect(whole.prompt_token_ids).toEqual(promptIds(request));
    expect(decode(whole.prompt_token_ids)).toContain('<|im_start|>user\nRead notes.txt<|im_end|>');
    expect(whole.choices[0].token_ids).toEqual(completionIds(message));
    expect(decode(whole.choices[0].token_ids)).toBe(`Reading it now — ünïcode too.<tool_call>${JSON.stringify({ id: 'call_1', name: 'read', arguments: '{"path":"notes.txt"}' })}</tool_call><|im_end|>`);
    expect(whole.choices[0].logprobs.content).toHaveLength(whole.choices[0].token_ids.length);
    expect(whole.choices[0].logprobs.content[0].top_logprobs).toHaveLength(2);
    expect(whole.usage).toMatchObject({ prompt_tokens: whole.prompt_token_ids.length, completion_tokens: whole.choices[0].token_ids.length });
    expect(encode('Read notes.txt').every((id) => whole.prompt_token_ids.includes(id))).toBe(true);
  });

  it('unstreamed: the ids and log-probabilities are taken out of output into the call fields, as sent', () => {
    const sent = structuredClone(whole);
    const decoder = createDecoder('openai-chat-completions')!;
    decoder.json(structuredClone(whole));
    const d = decoder.finish();
    expect(d.tokens).toEqual({ prompt: sent.prompt_token_ids, completion: sent.choices[0].token_ids, logprobs: sent.choices[0].logprobs });
    expect((d.output as Json).prompt_token_ids).toBeUndefined();
    expect((d.output as Json).choices[0].token_ids).toBeUndefined();
    expect((d.output as Json).choices[0].message).toEqual(message);
  });

  it('streamed: the prompt ids of the first chunk and every chunk\'s slice reassemble into exactly the unstreamed fields', () => {
    const frames = [...chatChunks(whole)];
    expect(frames.filter((f) => f.includes('"prompt_token_ids"'))).toHaveLength(1);
    expect(frames.filter((f) => f.includes('"token_ids"')).length).toBeGreaterThan(3);
    const d = decodeSseChunks('openai-chat-completions', frames);
    expect(d.complete).toBe(true);
    expect(d.tokens).toEqual({ prompt: whole.prompt_token_ids, completion: whole.choices[0].token_ids, logprobs: whole.choices[0].logprobs });
    expect(d.anomalies).toEqual([]);
  });

  it('a server that sends nothing of the kind leaves no token fields; a non-integer id is an anomaly, never a guess', () => {
    const plain = decodeSseChunks('openai-chat-completions', chatChunks({ ...whole, prompt_token_ids: undefined, choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }));
    expect(plain.tokens).toBeUndefined();
    const broken = decodeSseChunks('openai-chat-completions', [...chatChunks(whole)].map((f) => f.replace('"prompt_token_ids":[', '"prompt_token_ids":["x",')));
    expect(broken.tokens?.prompt).toEqual([]);
    expect(broken.anomalies.join('\n')).toMatch(/token id 0 is not a non-negative integer/);
  });

  describe("SGLang's shape (unstreamed: the choice's prompt_token_ids, meta_info.output_token_logprobs)", () => {
    const sglangRequest = { ...request, return_token_ids: undefined, return_prompt_token_ids: true, return_meta_info: true };
    const sglang = withTokenIds(sglangRequest, { ...answer(message), prompt_token_ids: undefined, choices: [{ index: 0, message, finish_reason: 'tool_calls' }] });
    const decoded = (body: Json) => {
      const decoder = createDecoder('openai-chat-completions')!;
      decoder.json(structuredClone(body));
      return decoder.finish();
    };

    it('the ids come from the choice and meta_info; the OpenAI-shaped logprobs stay the log-probabilities; the rest of meta_info stays in output', () => {
      const choice = sglang.choices[0] as Json;
      expect(sglang.prompt_token_ids).toBeUndefined();
      const d = decoded(sglang);
      expect(d.tokens).toEqual({ prompt: choice.prompt_token_ids, completion: completionIds(message), logprobs: choice.logprobs });
      expect(d.tokens!.prompt).toEqual(promptIds(request));
      const kept = (d.output as Json).choices[0];
      expect([kept.prompt_token_ids, kept.logprobs, kept.meta_info.output_token_logprobs]).toEqual([undefined, undefined, undefined]);
      expect(kept.meta_info).toMatchObject({ prompt_tokens: choice.prompt_token_ids.length, completion_tokens: choice.meta_info.completion_tokens, cached_tokens: 0 });
      expect(d.anomalies).toEqual([]);
    });

    it('without OpenAI-shaped logprobs, meta_info\'s [logprob, id, text] entries (or {logprob, token_id}) are the log-probabilities', () => {
      const entries = (sglang.choices[0] as Json).meta_info.output_token_logprobs as [number, number, string][];
      const tuples = decoded({ ...sglang, choices: [{ ...sglang.choices[0], logprobs: undefined }] });
      expect(tuples.tokens!.completion).toEqual(entries.map((e) => e[1]));
      expect(tuples.tokens!.logprobs!.content).toEqual(entries.map(([logprob, id, token]) => ({ token, token_id: id, logprob })));
      const dicts = decoded({ ...sglang, choices: [{ ...sglang.choices[0], logprobs: undefined, meta_info: { output_token_logprobs: entries.map(([logprob, token_id]) => ({ logprob, token_id })) } }] });
      expect(dicts.tokens!.completion).toEqual(entries.map((e) => e[1]));
      expect(dicts.tokens!.logprobs!.content.map((e) => e.token)).toEqual(entries.map(() => null));
    });

    it('a malformed entry stops the ids there, as an anomaly; ids that disagree with meta_info are said', () => {
      const entries = (sglang.choices[0] as Json).meta_info.output_token_logprobs as unknown[][];
      const broken = decoded({ ...sglang, choices: [{ ...sglang.choices[0], logprobs: undefined, meta_info: { output_token_logprobs: [entries[0], [-0.1, 'x', 'a'], entries[1]] } }] });
      expect(broken.tokens!.completion).toEqual([entries[0]![1]]);
      expect(broken.anomalies.join('\n')).toMatch(/output_token_logprobs entry 1 is not \[logprob, token id, text\]/);
      const disagree = decoded({ ...sglang, choices: [{ ...sglang.choices[0], token_ids: [1, 2, 3] }] });
      expect(disagree.tokens!.completion).toEqual([1, 2, 3]);
      expect(disagree.anomalies.join('\n')).toMatch(/names other ids than the completion's/);
    });
  });

  it('a follow-up call that re-sends the answer as it was begins with the previous prompt + completion ids', () => {
    const next = { ...request, messages: [...request.messages, message, { role: 'tool', tool_call_id: 'call_1', content: 'the notes' }] };
    const before = [...whole.prompt_token_ids, ...whole.choices[0].token_ids];
    expect(promptIds(next).slice(0, before.length)).toEqual(before);
  });
});
