import type { ToolRef } from '../../schemas/call.js';
import type { SseEvent } from './sse-parser.js';
import { DecoderBase, errorOf, isObject, num, parseData, str, type CallTokens, type DecodedResponse, type Json, type ResponseDecoder } from './types.js';

interface ToolCallState {
  id: string | null;
  type: string;
  name: string;
  arguments: string;
}

interface ChoiceState {
  index: number;
  role: string;
  content: string | null;
  refusal: string | null;
  reasoning_content: string | null;
  reasoning: string | null;
  toolCalls: Map<number, ToolCallState>;
  finishReason: string | null;
  /** vLLM's `return_token_ids` / `logprobs`: each chunk's delta ids and entries, in order. */
  tokenIds: number[] | null;
  logprobs: Json[] | null;
}

const append = (a: string | null, b: unknown): string | null => (typeof b === 'string' ? (a ?? '') + b : a);

/**
 * Reassembles an OpenAI Chat Completions stream (SSE.md §2): choices and tool calls by index (id, name,
 * argument pieces), reasoning_content / reasoning kept apart from content, the last non-null usage,
 * [DONE]. A response that ends with finish_reason tool_calls but lacks a tool call id or name is
 * incomplete (it cannot be exported).
 */
export class ChatDecoder extends DecoderBase implements ResponseDecoder {
  readonly protocol = 'openai-chat-completions' as const;
  private id: string | null = null;
  private model: string | null = null;
  private created: number | null = null;
  private systemFingerprint: string | null = null;
  private readonly choices = new Map<number, ChoiceState>();
  private usage: Json | null = null;
  private sawDone = false;
  /** vLLM sends the prompt's ids on the first chunk only. */
  private promptTokenIds: number[] | null = null;

  event(e: SseEvent): void {
    this.events++;
    if (e.data.trim() === '[DONE]') {
      if (this.sawDone) this.anomalies.add(`event ${e.index}: second [DONE]`);
      this.sawDone = true;
      return;
    }
    const chunk = parseData(e, this.anomalies);
    if (!chunk) return;
    if (this.sawDone) this.anomalies.add(`event ${e.index}: data after [DONE]`);
    if (isObject(chunk.error)) {
      this.error = errorOf(chunk.error);
      return;
    }
    this.id ??= str(chunk.id);
    this.model ??= str(chunk.model);
    this.created ??= typeof chunk.created === 'number' ? chunk.created : null;
    this.systemFingerprint ??= str(chunk.system_fingerprint);
    if (isObject(chunk.usage)) this.usage = chunk.usage; // cumulative snapshots: the last one wins
    if (Array.isArray(chunk.prompt_token_ids)) {
      if (this.promptTokenIds !== null) this.anomalies.add(`event ${e.index}: prompt_token_ids sent again (the first kept)`);
      else this.promptTokenIds = idsOf(chunk.prompt_token_ids, this.anomalies, e.index);
    }
    if (!Array.isArray(chunk.choices)) return;
    for (const c of chunk.choices as unknown[]) {
      if (!isObject(c)) continue;
      const index = num(c.index);
      let choice = this.choices.get(index);
      if (!choice) {
        choice = { index, role: 'assistant', content: null, refusal: null, reasoning_content: null, reasoning: null, toolCalls: new Map(), finishReason: null, tokenIds: null, logprobs: null };
        this.choices.set(index, choice);
      }
      const delta = isObject(c.delta) ? c.delta : {};
      if (typeof delta.role === 'string') choice.role = delta.role;
      choice.content = append(choice.content, delta.content);
      choice.refusal = append(choice.refusal, delta.refusal);
      choice.reasoning_content = append(choice.reasoning_content, delta.reasoning_content);
      choice.reasoning = append(choice.reasoning, delta.reasoning);
      if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls as unknown[]) if (isObject(tc)) this.toolCallDelta(e, choice, tc);
      if (typeof c.finish_reason === 'string') choice.finishReason = c.finish_reason;
      if (Array.isArray(c.token_ids)) choice.tokenIds = [...(choice.tokenIds ?? []), ...idsOf(c.token_ids, this.anomalies, e.index)];
      if (isObject(c.logprobs) && Array.isArray(c.logprobs.content)) choice.logprobs = [...(choice.logprobs ?? []), ...(c.logprobs.content as Json[])];
    }
  }

  private toolCallDelta(e: SseEvent, choice: ChoiceState, tc: Json): void {
    const k = typeof tc.index === 'number' ? tc.index : 0; // some servers omit index: treat as 0
    let state = choice.toolCalls.get(k);
    if (!state) {
      state = { id: null, type: 'function', name: '', arguments: '' };
      choice.toolCalls.set(k, state);
    }
    if (typeof tc.id === 'string' && tc.id !== '') {
      if (state.id !== null && state.id !== tc.id) this.anomalies.add(`event ${e.index}: tool call ${k} changed id ${state.id} -> ${tc.id} (first kept)`);
      state.id ??= tc.id;
    }
    if (typeof tc.type === 'string') state.type = tc.type;
    const fn = isObject(tc.function) ? tc.function : {};
    // Some servers repeat the name on every delta: set it once, never concatenate copies.
    if (typeof fn.name === 'string' && fn.name !== '' && state.name !== fn.name) {
      if (state.name !== '') this.anomalies.add(`event ${e.index}: tool call ${k} changed name ${state.name} -> ${fn.name} (first kept)`);
      else state.name = fn.name;
    }
    if (typeof fn.arguments === 'string') state.arguments += fn.arguments;
  }

  json(body: unknown): void {
    this.events++;
    if (isObject(body) && isObject(body.error)) this.error = errorOf(body.error);
    // Open-model servers (SGLang, vLLM before 0.10) answer errors flat: {object: "error", message, type, code}.
    else if (isObject(body) && body.object === 'error') this.error = errorOf(body);
    else if (isObject(body) && Array.isArray(body.choices)) this.whole = body;
    else this.anomalies.add('response body is JSON but not a chat completion');
  }

  finish(): DecodedResponse {
    const reasons: string[] = [];
    let output: Json | null = null;
    if (this.whole) {
      output = this.whole;
      this.usage = isObject(this.whole.usage) ? this.whole.usage : null;
    } else if (this.events > 0 && (this.id !== null || this.choices.size > 0)) {
      const choices = [...this.choices.values()].sort((a, b) => a.index - b.index).map((c) => this.buildChoice(c));
      output = { id: this.id, object: 'chat.completion', created: this.created, model: this.model, choices, usage: this.usage };
      // As vLLM's unstreamed answer has it (then taken out with the rest, as from a body).
      if (this.promptTokenIds !== null) output.prompt_token_ids = this.promptTokenIds;
      if (this.systemFingerprint !== null) output.system_fingerprint = this.systemFingerprint;
      if (!this.sawDone) reasons.push('the stream ended before [DONE]');
    } else if (!this.error) reasons.push(this.events === 0 ? 'no events' : 'no chunk with an id or choices');
    if (this.error) reasons.push(`error: ${this.error.type ?? 'error'}: ${this.error.message ?? ''}`.trim());

    const tokens = output ? takeTokens(output, this.anomalies) : undefined;
    const choices: Json[] = output && Array.isArray(output.choices) ? output.choices : [];
    const toolRefs: ToolRef[] = [];
    for (const c of choices) {
      const calls: Json[] = isObject(c.message) && Array.isArray(c.message.tool_calls) ? c.message.tool_calls : [];
      if (c.finish_reason === 'tool_calls' && (calls.length === 0 || calls.some((t) => !t.id || !t.function?.name))) {
        reasons.push(`choice ${c.index}: finish_reason tool_calls without a tool call id and name`);
      }
      for (const t of calls) if (typeof t.id === 'string' && t.id) toolRefs.push({ id: t.id, name: str(t.function?.name) ?? '' });
    }
    const u = this.usage;
    const cached = u ? num(u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens) : 0;
    return this.result(this.protocol, output, reasons, {
      stopReason: str(choices[0]?.finish_reason),
      usageReported: u,
      usage: u
        ? {
            input: Math.max(0, num(u.prompt_tokens) - cached),
            cached_input: cached,
            cache_creation: 0,
            output: num(u.completion_tokens),
            reasoning: num(u.completion_tokens_details?.reasoning_tokens),
          }
        : null,
      toolRefs,
      ...(tokens ? { tokens } : {}),
    });
  }

  private buildChoice(c: ChoiceState): Json {
    const message: Json = { role: c.role, content: c.content };
    if (c.refusal !== null) message.refusal = c.refusal;
    if (c.reasoning_content !== null) message.reasoning_content = c.reasoning_content;
    if (c.reasoning !== null) message.reasoning = c.reasoning;
    if (c.toolCalls.size > 0) {
      message.tool_calls = [...c.toolCalls.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, t]) => ({ id: t.id, type: t.type, function: { name: t.name, arguments: t.arguments } }));
    }
    const choice: Json = { index: c.index, message, finish_reason: c.finishReason };
    if (c.tokenIds !== null) choice.token_ids = c.tokenIds;
    if (c.logprobs !== null) choice.logprobs = { content: c.logprobs };
    return choice;
  }
}

/** Token ids as sent: integers only (anything else is an anomaly and stops the list there: never a guessed id). */
function idsOf(list: unknown[], anomalies: { add(m: string): void }, at: number | string): number[] {
  const bad = list.findIndex((x) => !Number.isInteger(x) || (x as number) < 0);
  if (bad === -1) return list as number[];
  anomalies.add(`${typeof at === 'number' ? `event ${at}` : at}: token id ${bad} is not a non-negative integer (${JSON.stringify(list[bad])})`);
  return list.slice(0, bad) as number[];
}

/**
 * The servers' token fields, taken out of the reassembled answer into the call's own fields (one place each; the
 * prompt's ids are the bulk of a long agent's record). vLLM: the top-level `prompt_token_ids`, the first choice's
 * `token_ids` and `logprobs`. SGLang (unstreamed answers only, from 0.5.13): the choice's `prompt_token_ids` and
 * `meta_info.output_token_logprobs` (`[logprob, id, text]` or `{logprob, token_id}` entries; the completion's ids and,
 * when the choice has no OpenAI-shaped `logprobs`, its log-probabilities). undefined when the server sent none.
 */
function takeTokens(output: Json, anomalies: { add(m: string): void }): CallTokens | undefined {
  const first = Array.isArray(output.choices) ? (output.choices as Json[]).find((c) => isObject(c) && c.index === 0) ?? (output.choices as Json[])[0] : undefined;
  const choice: Json = isObject(first) ? first : {};
  const meta: Json = isObject(choice.meta_info) ? choice.meta_info : {};
  const sglang = Array.isArray(meta.output_token_logprobs) ? sglangEntries(meta.output_token_logprobs as unknown[], anomalies) : null;
  const promptList = Array.isArray(output.prompt_token_ids) ? output.prompt_token_ids : Array.isArray(choice.prompt_token_ids) ? choice.prompt_token_ids : null;
  const prompt = promptList ? idsOf(promptList as unknown[], anomalies, 'body: prompt_token_ids') : null;
  const completion = Array.isArray(choice.token_ids) ? idsOf(choice.token_ids as unknown[], anomalies, 'body: token_ids') : Array.isArray(meta.output_ids) ? idsOf(meta.output_ids as unknown[], anomalies, 'body: meta_info.output_ids') : (sglang?.ids ?? null);
  const openai = isObject(choice.logprobs) && Array.isArray(choice.logprobs.content) ? { content: choice.logprobs.content as Json[] } : null;
  const logprobs = openai ?? (sglang ? { content: sglang.content } : null);
  if (prompt === null && completion === null && logprobs === null) return undefined;
  if (sglang && completion && sglang.ids.join() !== completion.join()) anomalies.add('body: meta_info.output_token_logprobs names other ids than the completion\'s (the completion\'s kept)');
  delete output.prompt_token_ids;
  delete choice.prompt_token_ids;
  delete choice.token_ids;
  if (openai) delete choice.logprobs;
  if (isObject(choice.meta_info)) {
    delete meta.output_token_logprobs;
    delete meta.output_ids;
  }
  return { prompt, completion, logprobs };
}

/** SGLang's `meta_info.output_token_logprobs` as ids and OpenAI-shaped entries; a malformed entry stops the list (never a guessed id). */
function sglangEntries(entries: unknown[], anomalies: { add(m: string): void }): { ids: number[]; content: Json[] } {
  const ids: number[] = [];
  const content: Json[] = [];
  for (const [i, e] of entries.entries()) {
    const [logprob, id, text] = Array.isArray(e) ? e : isObject(e) ? [e.logprob, e.token_id ?? e.id, e.token ?? e.text] : [];
    if (!Number.isInteger(id) || (id as number) < 0 || typeof logprob !== 'number') {
      anomalies.add(`body: meta_info.output_token_logprobs entry ${i} is not [logprob, token id, text] (${JSON.stringify(e)})`);
      break;
    }
    ids.push(id as number);
    content.push({ token: typeof text === 'string' ? text : null, token_id: id, logprob });
  }
  return { ids, content };
}
