import { anthropicSystem, anthropicTools } from './anthropic-request.js';
import { AnthropicDecoder } from './anthropic.js';
import { contentText, type WireProtocol } from './wire-protocol.js';

type Json = Record<string, any>;

/** Anthropic Messages (POST /v1/messages). */
export const anthropicMessages: WireProtocol = {
  name: 'anthropic-messages',
  path: /(^|\/)v1\/messages$/,
  createDecoder: () => new AnthropicDecoder(),
  finishReason: (o) => (typeof o.stop_reason === 'string' ? o.stop_reason : null),
  hasAnswerOrToolCall: (o) => Array.isArray(o.content) && o.content.some((b: Json) => (b.type === 'text' && String(b.text ?? '').trim() !== '') || b.type === 'tool_use'),
  outputText: (o) => (Array.isArray(o.content) ? (o.content as Json[]).filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join('') : ''),
  toolResultIds(body) {
    const ids = new Set<string>();
    for (const m of (body.messages ?? []) as Json[]) {
      if (Array.isArray(m.content)) for (const b of m.content as Json[]) if (b.type === 'tool_result' && typeof b.tool_use_id === 'string') ids.add(b.tool_use_id);
    }
    return ids;
  },
  userTexts: (body) => ((body.messages ?? []) as Json[]).filter((m) => m.role === 'user').map((m) => contentText(m.content)),
  systemAndTools: (body) => ({ system: anthropicSystem(body), tools: anthropicTools(body) }),
};
