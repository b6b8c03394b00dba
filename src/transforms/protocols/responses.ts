import type { ToolRef } from '../../schemas/call.js';
import type { SseEvent } from './sse-parser.js';
import { DecoderBase, errorOf, isObject, num, parseData, str, type DecodedResponse, type Json, type ResponseDecoder } from './types.js';

interface ItemState {
  item: Json;
  done: boolean;
  /** Delta text by content/summary index, used only when output_item.done never came (a cut stream). */
  text: Map<number, string>;
  summary: Map<number, string>;
  args: string;
  input: string;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done']);
const KNOWN_PREFIXES = ['response.'];
const TOOL_ITEMS = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'shell_call', 'mcp_call']);

/**
 * Reassembles an OpenAI Responses stream (SSE.md §3, also the WebSocket event frames): output items by
 * output_index with `output_item.done` as the source of truth, deltas as the fallback for a cut stream,
 * and the terminal completed / incomplete / failed event (its `response` carries the usage).
 */
export class ResponsesDecoder extends DecoderBase implements ResponseDecoder {
  readonly protocol = 'openai-responses' as const;
  private shell: Json | null = null;
  private terminal: { type: string; response: Json } | null = null;
  private readonly items = new Map<number, ItemState>();
  private lastSequence = -1;

  event(e: SseEvent): void {
    const data = parseData(e, this.anomalies);
    if (data) this.frame(data, e.index);
    else this.events++;
  }

  /** One event object (an SSE data payload or a WebSocket text frame). */
  frame(data: Json, index = this.events): void {
    this.events++;
    const type = str(data.type) ?? '';
    if (typeof data.sequence_number === 'number') {
      if (data.sequence_number <= this.lastSequence) this.anomalies.add(`event ${index}: sequence_number ${data.sequence_number} after ${this.lastSequence}`);
      else if (this.lastSequence >= 0 && data.sequence_number !== this.lastSequence + 1) {
        this.anomalies.add(`event ${index}: sequence_number jumps ${this.lastSequence} -> ${data.sequence_number}`);
      }
      this.lastSequence = Math.max(this.lastSequence, data.sequence_number);
    }
    if (TERMINAL.has(type)) {
      if (this.terminal) this.anomalies.add(`event ${index}: second terminal event ${type}`);
      const response = isObject(data.response) ? data.response : {};
      this.terminal = { type: type === 'response.done' ? `response.${str(response.status) ?? 'completed'}` : type, response };
      if (type === 'response.failed' && isObject(response.error)) this.error = errorOf(response.error);
      return;
    }
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        if (isObject(data.response)) this.shell = data.response;
        return;
      case 'response.output_item.added':
      case 'response.output_item.done': {
        const i = num(data.output_index);
        const state = this.itemAt(i, isObject(data.item) ? data.item : {});
        if (type === 'response.output_item.done') {
          if (state.done) this.anomalies.add(`event ${index}: output_item.done twice for output ${i}`);
          state.item = isObject(data.item) ? data.item : state.item;
          state.done = true;
        }
        return;
      }
      case 'response.output_text.delta':
        return this.appendTo(data, index, (s) => s.text, num(data.content_index));
      case 'response.reasoning_summary_text.delta':
        return this.appendTo(data, index, (s) => s.summary, num(data.summary_index));
      case 'response.function_call_arguments.delta':
        this.deltaItem(data, index).args += str(data.delta) ?? '';
        return;
      case 'response.custom_tool_call_input.delta':
        this.deltaItem(data, index).input += str(data.delta) ?? '';
        return;
      case 'error':
        this.error = { type: str(data.code) ?? str(data.error?.type), message: str(data.message) ?? str(data.error?.message) };
        return;
      default:
        // Known families whose content arrives whole in output_item.done: nothing to accumulate.
        if (!KNOWN_PREFIXES.some((p) => type.startsWith(p))) this.unknownEvents++;
    }
  }

  private itemAt(i: number, item: Json): ItemState {
    let state = this.items.get(i);
    if (!state) {
      state = { item, done: false, text: new Map(), summary: new Map(), args: '', input: '' };
      this.items.set(i, state);
    }
    return state;
  }

  private deltaItem(data: Json, index: number): ItemState {
    const i = num(data.output_index);
    if (!this.items.has(i)) this.anomalies.add(`event ${index}: ${String(data.type)} for output ${i}, which was never added`);
    return this.itemAt(i, { id: str(data.item_id) });
  }

  private appendTo(data: Json, index: number, pick: (s: ItemState) => Map<number, string>, k: number): void {
    const map = pick(this.deltaItem(data, index));
    map.set(k, (map.get(k) ?? '') + (str(data.delta) ?? ''));
  }

  json(body: unknown): void {
    this.events++;
    if (isObject(body) && isObject(body.error) && body.object !== 'response') {
      this.error = errorOf(body.error);
    } else if (isObject(body) && (body.object === 'response' || Array.isArray(body.output))) this.whole = body;
    else this.anomalies.add('response body is JSON but not a response');
  }

  finish(): DecodedResponse {
    const reasons: string[] = [];
    let output: Json | null = null;
    if (this.whole) {
      output = this.whole;
      if (output.status === 'failed' && isObject(output.error)) this.error = errorOf(output.error);
    } else if (this.terminal || this.shell || this.items.size > 0) {
      const base: Json = { ...(this.shell ?? {}), ...(this.terminal?.response ?? {}) };
      const fromTerminal: unknown = this.terminal?.response.output;
      const built = [...this.items.entries()].sort((a, b) => a[0] - b[0]).map(([i, s]) => this.buildItem(i, s, reasons));
      base.output = Array.isArray(fromTerminal) && fromTerminal.length > 0 ? fromTerminal : built;
      output = base;
      if (!this.terminal) reasons.push('the stream ended before response.completed / incomplete / failed');
    } else if (!this.error) reasons.push(this.events === 0 ? 'no events' : 'no response events');
    if (this.error) reasons.push(`error: ${this.error.type ?? 'error'}: ${this.error.message ?? ''}`.trim());

    const usage: Json | null = output && isObject(output.usage) ? output.usage : null;
    const items: Json[] = output && Array.isArray(output.output) ? output.output : [];
    const toolRefs: ToolRef[] = items
      .filter((it) => TOOL_ITEMS.has(it.type) && typeof (it.call_id ?? it.id) === 'string')
      .map((it) => {
        const ref: ToolRef = { id: (it.call_id ?? it.id) as string, name: str(it.namespace) ? `${it.namespace}/${str(it.name) ?? ''}` : (str(it.name) ?? '') };
        if (typeof it.id === 'string' && it.id !== ref.id) ref.item_id = it.id;
        return ref;
      });
    const cached = usage ? num(usage.input_tokens_details?.cached_tokens) : 0;
    const status = output ? str(output.status) : null;
    return this.result(this.protocol, output, reasons, {
      stopReason: status === 'incomplete' ? `incomplete:${str(output?.incomplete_details?.reason) ?? 'unknown'}` : status,
      usageReported: usage,
      usage: usage
        ? {
            input: Math.max(0, num(usage.input_tokens) - cached),
            cached_input: cached,
            cache_creation: 0,
            output: num(usage.output_tokens),
            reasoning: num(usage.output_tokens_details?.reasoning_tokens),
          }
        : null,
      toolRefs,
    });
  }

  /** The item as output_item.done gave it; for a cut stream, what the deltas built (flagged). */
  private buildItem(i: number, s: ItemState, reasons: string[]): Json {
    if (s.done) return s.item;
    reasons.push(`output ${i} was never done (rebuilt from deltas)`);
    const item: Json = { ...s.item, status: 'incomplete' };
    if (item.type === 'message') item.content = [...s.text.entries()].sort((a, b) => a[0] - b[0]).map(([, text]) => ({ type: 'output_text', text, annotations: [] }));
    if (item.type === 'reasoning') item.summary = [...s.summary.entries()].sort((a, b) => a[0] - b[0]).map(([, text]) => ({ type: 'summary_text', text }));
    if (item.type === 'function_call') item.arguments = s.args;
    if (item.type === 'custom_tool_call') item.input = s.input;
    return item;
  }
}
