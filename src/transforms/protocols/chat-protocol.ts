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
};
