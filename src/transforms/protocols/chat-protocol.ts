import { ChatDecoder } from './chat.js';
import { contentText, type WireProtocol } from './wire-protocol.js';

type Json = Record<string, any>;

/** OpenAI Chat Completions (POST …/chat/completions). */
export const openAiChatCompletions: WireProtocol = {
  name: 'openai-chat-completions',
  path: /(^|\/)chat\/completions$/,
  createDecoder: () => new ChatDecoder(),
  finishReason: (o) => (Array.isArray(o.choices) && typeof o.choices[0]?.finish_reason === 'string' ? o.choices[0].finish_reason : null),
  hasAnswerOrToolCall(o) {
    const m = (Array.isArray(o.choices) ? o.choices[0]?.message : undefined) as Json | undefined;
    return Boolean(m && ((typeof m.content === 'string' && m.content.trim() !== '') || (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)));
  },
  outputText: (o) => contentText((Array.isArray(o.choices) ? o.choices[0]?.message?.content : undefined) ?? ''),
  toolResultIds(body) {
    const ids = new Set<string>();
    for (const m of (body.messages ?? []) as Json[]) if (m.role === 'tool' && typeof m.tool_call_id === 'string') ids.add(m.tool_call_id);
    return ids;
  },
  userTexts: (body) => ((body.messages ?? []) as Json[]).filter((m) => m.role === 'user').map((m) => contentText(m.content)),
  // The system (and developer) messages before the conversation's first turn; tools as sent (OpenAI function tools).
  systemAndTools(body) {
    const messages = (body.messages ?? []) as Json[];
    const first = messages.findIndex((m) => m.role !== 'system' && m.role !== 'developer');
    const system = (first === -1 ? messages : messages.slice(0, first)).map((m) => contentText(m.content)).filter((t) => t !== '');
    return { system: system.join('\n\n'), tools: (body.tools ?? []) as Json[] };
  },
};
