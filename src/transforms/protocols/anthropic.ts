import type { SseEvent } from './sse-parser.js';
import { DecoderBase, errorOf, isObject, num, parseData, str, type DecodedResponse, type Json, type ResponseDecoder } from './types.js';

interface OpenBlock {
  block: Json;
  /** input_json_delta pieces of a tool_use-like block, parsed at content_block_stop. */
  partialJson?: string;
  stopped: boolean;
}

const JSON_INPUT_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);
const TOOL_BLOCKS = JSON_INPUT_BLOCKS;

/** Which field a delta appends to, and the block type it belongs in. */
const DELTA_FIELD: Record<string, { field: string; blockType: string }> = {
  text_delta: { field: 'text', blockType: 'text' },
  thinking_delta: { field: 'thinking', blockType: 'thinking' },
};

/**
 * Reassembles an Anthropic Messages stream (SSE.md §1) into the non-streaming message shape: blocks by
 * index, tool input from input_json_delta, thinking with its byte-exact signature, citations, usage of
 * message_start and message_delta merged field by field (last value wins). Broken streams are recorded
 * as anomalies, never thrown.
 */
export class AnthropicDecoder extends DecoderBase implements ResponseDecoder {
  readonly protocol = 'anthropic-messages' as const;
  private message: Json | null = null;
  private readonly blocks = new Map<number, OpenBlock>();
  private usage: Json = {};
  private stopReason: string | null = null;
  private stopSequence: string | null = null;
  private sawStop = false;
  private pings = 0;

  event(e: SseEvent): void {
    this.events++;
    const data = parseData(e, this.anomalies);
    if (!data) return;
    const type = str(data.type) ?? e.event;
    if (e.event && data.type && e.event !== data.type) this.anomalies.add(`event ${e.index}: event name '${e.event}' but data.type '${data.type}'`);
    switch (type) {
      case 'message_start': {
        if (this.message) this.anomalies.add(`event ${e.index}: duplicate message_start (the first one is kept)`);
        else if (isObject(data.message)) {
          this.message = { ...data.message, content: [] };
          if (isObject(data.message.usage)) this.usage = { ...data.message.usage };
        } else this.anomalies.add(`event ${e.index}: message_start without a message`);
        return;
      }
      case 'content_block_start': {
        const index = num(data.index);
        if (this.blocks.has(index)) this.anomalies.add(`event ${e.index}: content_block_start for block ${index}, already open (replaced)`);
        // Freshly parsed for this event only: ours to keep, no copy needed.
        const block: Json = isObject(data.content_block) ? data.content_block : { type: 'unknown' };
        const open: OpenBlock = { block, stopped: false };
        if (JSON_INPUT_BLOCKS.has(block.type)) open.partialJson = '';
        this.blocks.set(index, open);
        return;
      }
      case 'content_block_delta':
        return this.delta(e, data);
      case 'content_block_stop': {
        const index = num(data.index);
        const open = this.blocks.get(index);
        if (!open) this.anomalies.add(`event ${e.index}: content_block_stop for block ${index}, never opened`);
        else this.close(index, open);
        return;
      }
      case 'message_delta': {
        if (isObject(data.delta)) {
          if ('stop_reason' in data.delta) this.stopReason = str(data.delta.stop_reason);
          if ('stop_sequence' in data.delta) this.stopSequence = str(data.delta.stop_sequence);
        }
        if (isObject(data.usage)) {
          // Cumulative counts: the last value of each field wins; fields absent here keep their start value.
          for (const [k, v] of Object.entries(data.usage)) if (v !== null && v !== undefined) this.usage[k] = v;
        }
        return;
      }
      case 'message_stop':
        this.sawStop = true;
        return;
      case 'ping':
        this.pings++;
        return;
      case 'error': {
        this.error = errorOf(data.error);
        return;
      }
      default:
        this.unknownEvents++;
    }
  }

  private delta(e: SseEvent, data: Json): void {
    const index = num(data.index);
    const delta = isObject(data.delta) ? data.delta : {};
    const dtype = str(delta.type) ?? 'unknown';
    let open = this.blocks.get(index);
    if (!open) {
      this.anomalies.add(`event ${e.index}: ${dtype} for block ${index}, which was never opened (kept in a block of its own)`);
      const blockType = DELTA_FIELD[dtype]?.blockType ?? (dtype === 'input_json_delta' ? 'tool_use' : 'unknown');
      open = { block: { type: blockType }, stopped: false };
      if (dtype === 'input_json_delta') open.partialJson = '';
      this.blocks.set(index, open);
    }
    const block = open.block;
    const simple = DELTA_FIELD[dtype];
    if (simple) {
      if (block.type !== simple.blockType) this.anomalies.add(`event ${e.index}: ${dtype} inside a ${block.type} block ${index}`);
      block[simple.field] = (typeof block[simple.field] === 'string' ? block[simple.field] : '') + (str(delta[simple.field]) ?? '');
    } else if (dtype === 'input_json_delta') {
      if (open.partialJson === undefined) {
        this.anomalies.add(`event ${e.index}: input_json_delta inside a ${block.type} block ${index}`);
        open.partialJson = '';
      }
      open.partialJson += str(delta.partial_json) ?? '';
    } else if (dtype === 'signature_delta') {
      block.signature = str(delta.signature) ?? ''; // byte-exact: replayed thinking is verified against it
    } else if (dtype === 'citations_delta') {
      (block.citations ??= []).push(delta.citation);
    } else {
      this.unknownEvents++;
      this.anomalies.add(`event ${e.index}: unknown delta type '${dtype}' for block ${index}`);
    }
  }

  private close(index: number, open: OpenBlock): void {
    if (open.stopped) this.anomalies.add(`block ${index} stopped twice`);
    open.stopped = true;
    if (open.partialJson === undefined) return;
    const text = open.partialJson;
    open.partialJson = undefined;
    if (text.trim() === '') {
      open.block.input = isObject(open.block.input) ? open.block.input : {};
      return;
    }
    try {
      open.block.input = JSON.parse(text);
    } catch {
      this.anomalies.add(`block ${index}: tool input is not valid JSON (${text.length} chars kept as a string)`);
      open.block.input = text;
    }
  }

  json(body: unknown): void {
    this.events++;
    if (isObject(body) && body.type === 'error') {
      this.error = errorOf(body.error);
    } else if (isObject(body) && body.type === 'message') this.whole = body;
    else this.anomalies.add('response body is JSON but not a message');
  }

  finish(): DecodedResponse {
    const reasons: string[] = [];
    let output: Json | null;
    if (this.whole) {
      output = this.whole;
      this.usage = isObject(this.whole.usage) ? this.whole.usage : {};
      this.stopReason = str(this.whole.stop_reason);
    } else if (this.message) {
      for (const [index, open] of this.blocks) {
        if (!open.stopped) {
          reasons.push(`block ${index} was never stopped`);
          this.close(index, open);
        }
      }
      const content = [...this.blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, open]) => open.block);
      output = { ...this.message, content, stop_reason: this.stopReason, stop_sequence: this.stopSequence, usage: this.usage };
      if (!this.sawStop) reasons.push('the stream ended before message_stop');
    } else {
      output = null;
      if (!this.error) reasons.push(this.events === 0 ? 'no events' : 'no message_start');
    }
    if (this.error) reasons.push(`error event: ${this.error.type ?? 'error'}: ${this.error.message ?? ''}`.trim());
    const content: Json[] = output && Array.isArray(output.content) ? output.content : [];
    const hasUsage = Object.keys(this.usage).length > 0;
    return this.result(this.protocol, output, reasons, {
      stopReason: this.stopReason,
      usageReported: hasUsage ? this.usage : null,
      usage: hasUsage
        ? {
            input: num(this.usage.input_tokens),
            cached_input: num(this.usage.cache_read_input_tokens),
            cache_creation: num(this.usage.cache_creation_input_tokens),
            output: num(this.usage.output_tokens),
            reasoning: 0,
          }
        : null,
      toolRefs: content.filter((b) => TOOL_BLOCKS.has(b.type) && typeof b.id === 'string').map((b) => ({ id: b.id as string, name: str(b.name) ?? '' })),
    });
  }
}
