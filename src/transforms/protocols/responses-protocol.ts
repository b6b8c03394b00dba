import { ResponsesDecoder } from './responses.js';
import { contentText, type WireProtocol } from './wire-protocol.js';

type Json = Record<string, any>;

/** OpenAI Responses (POST …/responses). */
export const openAiResponses: WireProtocol = {
  name: 'openai-responses',
  path: /(^|\/)responses$/,
  createDecoder: () => new ResponsesDecoder(),
  finishReason(o) {
    if (o.status === 'incomplete') return typeof o.incomplete_details?.reason === 'string' ? o.incomplete_details.reason : 'incomplete';
    return o.status === 'completed' ? 'completed' : null;
  },
  hasAnswerOrToolCall: (o) =>
    Array.isArray(o.output) &&
    o.output.some((i: Json) => i.type === 'function_call' || i.type === 'custom_tool_call' || (i.type === 'message' && Array.isArray(i.content) && i.content.some((c: Json) => String(c.text ?? '').trim() !== ''))),
  outputText: (o) => (Array.isArray(o.output) ? (o.output as Json[]).filter((i) => i.type === 'message').map((i) => contentText(i.content)).join('') : ''),
  toolResultIds(body) {
    const ids = new Set<string>();
    for (const it of (Array.isArray(body.input) ? body.input : []) as Json[]) {
      if ((it.type === 'function_call_output' || it.type === 'custom_tool_call_output') && typeof it.call_id === 'string') ids.add(it.call_id);
    }
    return ids;
  },
  userTexts: (body) => ((Array.isArray(body.input) ? body.input : []) as Json[]).filter((it) => it.role === 'user' && it.type !== 'agent_message').map((it) => contentText(it.content)),
  // The instructions; tools as sent (Codex's ACTF keeps Responses tools as they are).
  systemAndTools: (body) => ({ system: typeof body.instructions === 'string' ? body.instructions : '', tools: (Array.isArray(body.tools) ? body.tools : []) as Json[] }),
};
