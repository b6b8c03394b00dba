/**
 * The scripted model answering as vLLM does when a request asks for `return_token_ids` / `logprobs`: the prompt's ids,
 * the sampled ids and their log-probabilities, from a real BPE tokenizer (cl100k_base, shipped with its vocabulary by
 * gpt-tokenizer) over a ChatML rendering of the conversation. Each piece is encoded alone and the ids joined, so a call
 * whose conversation re-sends the previous answer as it was begins with exactly the previous prompt + completion ids —
 * and one that rewrote the history does not, where it rewrote it.
 */
import { decode, encode } from 'gpt-tokenizer/encoding/cl100k_base';

type Json = Record<string, any>;

const IM_START = 100264;
const IM_END = 100265;
const NEWLINE = encode('\n');

const text = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((p) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';

/** An assistant message's body as the model wrote it: its reasoning, its text, each tool call. */
function assistantBody(m: Json): number[] {
  const ids: number[] = [];
  const reasoning = text(m.reasoning_content ?? m.reasoning);
  if (reasoning) ids.push(...encode(`<think>${reasoning}</think>\n`));
  const content = text(m.content);
  if (content) ids.push(...encode(content));
  for (const call of (m.tool_calls ?? []) as Json[]) ids.push(...encode(`<tool_call>${JSON.stringify({ id: call.id, name: call.function?.name, arguments: call.function?.arguments })}</tool_call>`));
  return ids;
}

function messageIds(m: Json): number[] {
  const body = m.role === 'assistant' ? assistantBody(m) : encode(m.role === 'tool' ? `<tool_response id=${JSON.stringify(String(m.tool_call_id))}>${text(m.content)}</tool_response>` : text(m.content));
  return [IM_START, ...encode(`${String(m.role)}\n`), ...body, IM_END, ...NEWLINE];
}

/** The prompt vLLM would feed the model: the tools, each message, then the assistant's turn opened. */
export function promptIds(body: Json): number[] {
  const ids: number[] = [];
  if (Array.isArray(body.tools) && body.tools.length > 0) ids.push(IM_START, ...encode('tools\n'), ...encode(JSON.stringify(body.tools)), IM_END, ...NEWLINE);
  for (const m of (body.messages ?? []) as Json[]) ids.push(...messageIds(m));
  ids.push(IM_START, ...encode('assistant\n'));
  return ids;
}

/** The answer's sampled ids: its body and the end of the turn. */
export function completionIds(message: Json): number[] {
  return [...assistantBody(message), IM_END];
}

/** A made-up but fixed log-probability per position (the scripted model samples nothing). */
function logprobEntry(id: number, i: number, top: number): Json {
  const token = id === IM_END ? '<|im_end|>' : Buffer.from(encodeBytes(id)).toString('utf8');
  const logprob = -((i % 7) + 1) / 64;
  const entry: Json = { token, logprob, bytes: encodeBytes(id) };
  entry.top_logprobs = top > 0 ? [{ token, logprob, bytes: entry.bytes }, ...Array.from({ length: top - 1 }, (_, k) => ({ token: `alt${k}`, logprob: logprob - (k + 1), bytes: [...Buffer.from(`alt${k}`)] }))] : [];
  return entry;
}

const encodeBytes = (id: number): number[] => (id === IM_END ? [...Buffer.from('<|im_end|>')] : [...Buffer.from(decode([id]), 'utf8')]);

/**
 * A chat completion with the token fields the request asked for, unchanged otherwise; the usage counted from the ids.
 * vLLM: `prompt_token_ids` at the top, `token_ids` and `logprobs.content` on the choice. SGLang (`return_prompt_token_ids`,
 * `return_meta_info`; unstreamed only, see sglangStreamRefusal): the choice's `prompt_token_ids` and `meta_info` with
 * `output_token_logprobs` as `[logprob, id, text]`.
 */
export function withTokenIds(body: Json, completion: Json): Json {
  const ids = body.return_token_ids === true;
  const logprobs = body.logprobs === true;
  const sglangPrompt = body.return_prompt_token_ids === true;
  const sglangMeta = body.return_meta_info === true;
  if (!ids && !logprobs && !sglangPrompt && !sglangMeta) return completion;
  const prompt = promptIds(body);
  const choices = (completion.choices as Json[]).map((c) => {
    const sampled = completionIds(c.message);
    const entries = sampled.map((id, i) => logprobEntry(id, i, Number(body.top_logprobs ?? 0)));
    return {
      ...c,
      ...(logprobs ? { logprobs: { content: entries } } : {}),
      ...(ids ? { token_ids: sampled } : {}),
      ...(sglangPrompt ? { prompt_token_ids: prompt } : {}),
      ...(sglangMeta
        ? {
            meta_info: {
              id: completion.id,
              finish_reason: { type: c.finish_reason === 'tool_calls' ? 'stop' : c.finish_reason, matched: null },
              prompt_tokens: prompt.length,
              completion_tokens: sampled.length,
              cached_tokens: 0,
              // SGLang sends the sampled ids' log-probabilities here only when the request asked for logprobs.
              ...(logprobs ? { output_token_logprobs: sampled.map((id, i) => [entries[i]!.logprob, id, entries[i]!.token]) } : {}),
              weight_version: 'default',
            },
          }
        : {}),
    };
  });
  const completionTokens = completionIds(completion.choices[0].message).length;
  return {
    ...completion,
    choices,
    usage: { ...completion.usage, prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens, prompt_tokens_details: { cached_tokens: 0 } },
    ...(ids ? { prompt_token_ids: prompt } : {}),
  };
}

/** SGLang refuses its token fields on a streamed request (serving_chat.py): its 400, or null. */
export function sglangStreamRefusal(body: Json): { status: 400; body: Json } | null {
  if (body.stream !== true) return null;
  const field = body.return_prompt_token_ids === true ? 'return_prompt_token_ids' : body.return_meta_info === true ? 'return_meta_info' : null;
  if (!field) return null;
  return { status: 400, body: { object: 'error', message: `${field} is not supported with streaming. Please set stream=false when using ${field}=true.`, type: 'BadRequestError', param: null, code: 400 } };
}
