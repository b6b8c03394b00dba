/** Chat Completions (SSE.md §2) and Responses (SSE.md §3) streams from whole response objects. */
import { pieces, sseFrame } from './encode-anthropic.js';

type Json = Record<string, any>;

/** Chat: role chunk, content pieces, tool calls split across chunks (id and name first), finish, usage, [DONE]. */
export function* chatChunks(completion: Json): Generator<string> {
  const base = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
  let first = true;
  // vLLM's token fields: the prompt's ids on the first chunk only; each later chunk its slice of the sampled ids.
  const chunk = (choices: Json[], extra: Json = {}) => {
    const promptIds = first && Array.isArray(completion.prompt_token_ids) ? { prompt_token_ids: completion.prompt_token_ids } : {};
    first = false;
    return sseFrame(undefined, { ...base, choices, ...extra, ...promptIds });
  };
  for (const c of completion.choices as Json[]) {
    const m: Json = c.message ?? {};
    const slices = tokenSlices(c);
    yield chunk([{ index: c.index, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    if (typeof m.reasoning_content === 'string') {
      for (const r of pieces(m.reasoning_content, 24)) yield chunk([{ index: c.index, delta: { reasoning_content: r }, finish_reason: null, ...slices.next() }]);
    }
    if (typeof m.content === 'string' && m.content !== '') {
      for (const text of pieces(m.content, 24)) yield chunk([{ index: c.index, delta: { content: text }, finish_reason: null, ...slices.next() }]);
    }
    for (const [k, tc] of ((m.tool_calls ?? []) as Json[]).entries()) {
      yield chunk([{ index: c.index, delta: { tool_calls: [{ index: k, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] }, finish_reason: null }]);
      for (const a of pieces(tc.function.arguments, 16)) {
        yield chunk([{ index: c.index, delta: { tool_calls: [{ index: k, function: { arguments: a } }] }, finish_reason: null, ...slices.next() }]);
      }
    }
    yield chunk([{ index: c.index, delta: {}, finish_reason: c.finish_reason, ...slices.rest() }]);
  }
  if (completion.usage) yield chunk([], { usage: completion.usage });
  yield sseFrame(undefined, '[DONE]');
}

/** Responses over SSE: each event of responsesEventObjects as an `event:`/`data:` frame. No [DONE]. */
export function* responsesEvents(response: Json): Generator<string> {
  for (const e of responsesEventObjects(response)) yield sseFrame(e.type as string, e);
}

/** Responses events (SSE data, or WebSocket text frames): created, in_progress, each item, completed. */
export function* responsesEventObjects(response: Json): Generator<Json> {
  let seq = 0;
  const ev = (type: string, data: Json): Json => ({ type, sequence_number: seq++, ...data });
  const shell = { ...response, status: 'in_progress', output: [], usage: null };
  yield ev('response.created', { response: shell });
  yield ev('response.in_progress', { response: shell });
  for (const [output_index, item] of (response.output as Json[]).entries()) {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      yield ev('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      for (const [summary_index, part] of ((item.summary ?? []) as Json[]).entries()) {
        yield ev('response.reasoning_summary_part.added', { item_id, output_index, summary_index, part: { type: 'summary_text', text: '' } });
        for (const delta of pieces(part.text, 24)) yield ev('response.reasoning_summary_text.delta', { item_id, output_index, summary_index, delta });
        yield ev('response.reasoning_summary_text.done', { item_id, output_index, summary_index, text: part.text });
        yield ev('response.reasoning_summary_part.done', { item_id, output_index, summary_index, part });
      }
    } else if (item.type === 'message') {
      yield ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      for (const [content_index, part] of ((item.content ?? []) as Json[]).entries()) {
        yield ev('response.content_part.added', { item_id, output_index, content_index, part: { ...part, text: '' } });
        for (const delta of pieces(part.text, 24)) yield ev('response.output_text.delta', { item_id, output_index, content_index, delta });
        yield ev('response.output_text.done', { item_id, output_index, content_index, text: part.text });
        yield ev('response.content_part.done', { item_id, output_index, content_index, part });
      }
    } else if (item.type === 'function_call') {
      yield ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of pieces(item.arguments, 16)) yield ev('response.function_call_arguments.delta', { item_id, output_index, delta });
      yield ev('response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments });
    } else if (item.type === 'custom_tool_call') {
      yield ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      for (const delta of pieces(item.input, 16)) yield ev('response.custom_tool_call_input.delta', { item_id, output_index, delta });
      yield ev('response.custom_tool_call_input.done', { item_id, output_index, input: item.input });
    } else {
      yield ev('response.output_item.added', { output_index, item });
    }
    yield ev('response.output_item.done', { output_index, item });
  }
  // An answer cut at the output limit ends with response.incomplete, as OpenAI's does.
  if (response.status === 'incomplete') yield ev('response.incomplete', { response });
  else yield ev('response.completed', { response: { ...response, status: response.status ?? 'completed' } });
}

/** A choice's sampled ids and log-probabilities handed out a few per chunk, the rest on its last chunk. */
function tokenSlices(choice: Json): { next(): Json; rest(): Json } {
  const ids: number[] | undefined = choice.token_ids;
  const entries: Json[] | undefined = choice.logprobs?.content;
  const total = ids?.length ?? entries?.length ?? 0;
  let at = 0;
  const take = (n: number): Json => {
    const end = Math.min(total, at + n);
    const out: Json = {};
    if (ids) out.token_ids = ids.slice(at, end);
    if (entries) out.logprobs = { content: entries.slice(at, end) };
    at = end;
    return total === 0 ? {} : out;
  };
  return { next: () => take(3), rest: () => take(total) };
}
