import type { Call } from '../../schemas/call.js';
import type { ContentBlock } from '../../schemas/content.js';
import type { SftMessage } from '../../schemas/sft.js';
import { flatten, Unavailable } from './project.js';

type Json = Record<string, any>;

/**
 * SFT messages from an actual Anthropic Messages request and response (seeds/003 §4.3, compaction segments):
 * what the model saw, message by message — a user message's tool_result blocks become tool messages and its
 * other blocks one user message, in order; an assistant message's thinking, text and tool_use become one
 * assistant message; a mid-conversation `system` message stays a system message. cache_control and other
 * delivery details are dropped; content that cannot be represented makes the segment unavailable.
 */
export interface AnthropicSftOptions {
  keepThinking: boolean;
  /** Image data URIs, appended in order as `<image>` placeholders are written. */
  images: string[];
}

function assistantMessage(content: unknown, o: AnthropicSftOptions, where: string): SftMessage {
  const blocks: Json[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as Json[]) : [];
  let reasoning = '';
  let text = '';
  const calls: Extract<SftMessage, { role: 'assistant' }>['tool_calls'] = [];
  for (const b of blocks) {
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'thinking') reasoning += String(b.thinking ?? '');
    else if (b.type === 'tool_use') {
      if (typeof b.id !== 'string' || b.id === '') throw new Unavailable(`${where}: a tool_use without an id`);
      if (!b.input || typeof b.input !== 'object' || Array.isArray(b.input)) throw new Unavailable(`${where}: arguments of '${b.name}' are not a JSON object`);
      calls.push({ id: b.id, type: 'function', function: { name: String(b.name), arguments: b.input as Record<string, unknown> } });
    } else throw new Unavailable(`${where}: an assistant '${b.type}' block cannot be represented in SFT`);
  }
  return { role: 'assistant', reasoning_content: o.keepThinking ? reasoning : '', content: text, tool_calls: calls };
}

function userMessages(content: unknown, o: AnthropicSftOptions, where: string): SftMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: SftMessage[] = [];
  let pending: ContentBlock[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ role: 'user', content: flatten(pending, o.images, where) });
    pending = [];
  };
  for (const b of (Array.isArray(content) ? content : []) as Json[]) {
    if (b.type === 'tool_result') {
      flush();
      if (typeof b.tool_use_id !== 'string' || b.tool_use_id === '') throw new Unavailable(`${where}: a tool_result without a tool_use_id`);
      const c = b.content ?? '';
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: flatten(typeof c === 'string' ? c : (c as ContentBlock[]), o.images, `${where} result of ${b.tool_use_id}`) });
    } else {
      const { cache_control: _c, ...block } = b;
      pending.push(block as ContentBlock);
    }
  }
  flush();
  return out;
}

/** The messages of a request body, system prompt excluded (it is the segment's own first message). */
export function anthropicRequestMessages(body: Json, o: AnthropicSftOptions, where: string): SftMessage[] {
  const out: SftMessage[] = [];
  ((body.messages ?? []) as Json[]).forEach((m, i) => {
    const at = `${where} message ${i}`;
    if (m.role === 'user') out.push(...userMessages(m.content, o, at));
    else if (m.role === 'assistant') out.push(assistantMessage(m.content, o, at));
    else if (m.role === 'system') out.push({ role: 'system', content: flatten(typeof m.content === 'string' ? m.content : (m.content as ContentBlock[]), o.images, at) });
    else throw new Unavailable(`${at}: unknown role '${String(m.role)}'`);
  });
  return out;
}

/** The assistant message a call's reassembled response holds. */
export function anthropicResponseMessage(call: Call, o: AnthropicSftOptions): SftMessage {
  return assistantMessage((call.output as Json | null)?.content, o, `call ${call.call_id} output`);
}
