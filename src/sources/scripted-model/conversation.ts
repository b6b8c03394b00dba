import type { Protocol } from '../../schemas/call.js';

type Json = Record<string, any>;

/** `fromAgent`: a user event that is another agent's message (Codex v2's agent_message), not the user's. */
export type ConversationEvent = { kind: 'user'; text: string; fromAgent?: true } | { kind: 'assistant' } | { kind: 'tool_result'; text: string };

/** What the script looks at, the same for all three protocols. */
export interface Conversation {
  events: ConversationEvent[];
  /** Offered tools by name ("namespace/name" inside a Responses namespace), with their parameter schema. */
  tools: Map<string, { parameters: Json; custom: boolean }>;
  thinking: boolean;
  model: string;
  /** Text that may name the working directory (system prompt and user messages). */
  haystack: string;
  /** The system prompt alone (instructions: a user simulator's name its scenario). */
  system: string;
}

const textOfContent = (c: unknown): string => {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .map((b: Json) => (typeof b?.text === 'string' ? b.text : typeof b?.content === 'string' ? b.content : Array.isArray(b?.content) ? textOfContent(b.content) : ''))
    .filter(Boolean)
    .join('\n');
};

function anthropic(body: Json): Conversation {
  const events: ConversationEvent[] = [];
  for (const m of (body.messages ?? []) as Json[]) {
    // role:"system" entries appear mid-conversation in Claude Code >= 2.1.3xx: not part of the dialogue.
    if (m.role === 'assistant') events.push({ kind: 'assistant' });
    if (m.role !== 'user') continue;
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    for (const b of blocks) if (b.type === 'tool_result') events.push({ kind: 'tool_result', text: textOfContent(b.content) });
    const text = blocks.filter((b) => b.type === 'text').map((b) => b.text as string).join('\n');
    if (text) events.push({ kind: 'user', text });
  }
  const tools = new Map<string, { parameters: Json; custom: boolean }>();
  for (const t of (body.tools ?? []) as Json[]) if (t.name) tools.set(t.name, { parameters: t.input_schema ?? {}, custom: false });
  const system = typeof body.system === 'string' ? body.system : textOfContent(body.system);
  return { events, tools, thinking: Boolean(body.thinking && body.thinking.type !== 'disabled'), model: body.model ?? 'scripted', haystack: system, system };
}

function chat(body: Json): Conversation {
  const events: ConversationEvent[] = [];
  let system = '';
  for (const m of (body.messages ?? []) as Json[]) {
    if (m.role === 'assistant') events.push({ kind: 'assistant' });
    else if (m.role === 'tool') events.push({ kind: 'tool_result', text: textOfContent(m.content) });
    else if (m.role === 'user') {
      const text = textOfContent(m.content);
      // OpenClaw re-appends its internal context after every tool result (data, not a user turn): counting it as
      // the latest user message would restart whatever scenario a quoted tag in it names, on every request.
      if (!text.startsWith('<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>')) events.push({ kind: 'user', text });
    }
    else system += `${textOfContent(m.content)}\n`;
  }
  const tools = new Map<string, { parameters: Json; custom: boolean }>();
  for (const t of (body.tools ?? []) as Json[]) if (t.function?.name) tools.set(t.function.name, { parameters: t.function.parameters ?? {}, custom: false });
  return { events, tools, thinking: Boolean(body.reasoning_effort || body.thinking), model: body.model ?? 'scripted', haystack: system, system };
}

const OUTPUT_ITEMS = new Set(['function_call', 'custom_tool_call', 'reasoning', 'local_shell_call']);

function responses(body: Json): Conversation {
  const events: ConversationEvent[] = [];
  let system = typeof body.instructions === 'string' ? body.instructions : '';
  const input: Json[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input ?? []);
  let inAssistantTurn = false;
  for (const item of input) {
    const type = item.type ?? (item.role ? 'message' : undefined);
    const assistantItem = OUTPUT_ITEMS.has(type) || (type === 'message' && item.role === 'assistant');
    if (assistantItem) {
      if (!inAssistantTurn) events.push({ kind: 'assistant' }); // one model response = one run of output items
      inAssistantTurn = true;
      continue;
    }
    inAssistantTurn = false;
    if (type === 'function_call_output' || type === 'custom_tool_call_output') events.push({ kind: 'tool_result', text: textOfContent(item.output) });
    // Codex multi-agent v2: tasks and answers between agents arrive as agent_message items (the payload
    // may be encrypted; the plain header names the message type and the task).
    else if (type === 'agent_message') events.push({ kind: 'user', text: textOfContent(item.content), fromAgent: true });
    else if (type === 'message' && item.role === 'user') events.push({ kind: 'user', text: textOfContent(item.content) });
    else if (type === 'message') system += `${textOfContent(item.content)}\n`;
  }
  const tools = new Map<string, { parameters: Json; custom: boolean }>();
  for (const t of (body.tools ?? []) as Json[]) {
    if (t.type === 'namespace') for (const s of (t.tools ?? []) as Json[]) tools.set(`${t.name}/${s.name}`, { parameters: s.parameters ?? {}, custom: s.type === 'custom' });
    else if (t.name) tools.set(t.name, { parameters: t.parameters ?? {}, custom: t.type === 'custom' });
  }
  return { events, tools, thinking: Boolean(body.reasoning), model: body.model ?? 'scripted', haystack: system, system };
}

export function conversationOf(protocol: Protocol, body: Json): Conversation {
  const c = protocol === 'anthropic-messages' ? anthropic(body) : protocol === 'openai-chat-completions' ? chat(body) : responses(body);
  c.haystack += `\n${c.events.map((e) => (e.kind === 'assistant' ? '' : e.text)).join('\n')}`;
  return c;
}
