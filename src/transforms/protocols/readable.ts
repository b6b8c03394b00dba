/**
 * A model request and its response as a person reads them, the same shape for every protocol: system text, turns
 * of typed parts, the tools offered (name and description), and the other parameters. Nothing is dropped silently:
 * a block of a kind not listed here is an `other` part holding its JSON.
 */
export type ReadablePart =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string; redacted?: boolean }
  | { kind: 'tool_call'; id: string; name: string; input: string }
  | { kind: 'tool_result'; id: string; text: string; error?: boolean }
  | { kind: 'image'; media: string }
  | { kind: 'encrypted'; chars: number }
  | { kind: 'other'; type: string; json: string };

export interface ReadableTurn {
  role: string;
  parts: ReadablePart[];
}

export interface ReadableRequest {
  system: string[];
  turns: ReadableTurn[];
  tools: { name: string; description: string }[];
  params: Record<string, unknown>;
}

export interface ReadableResponse {
  parts: ReadablePart[];
  stop_reason: string | null;
}

type Json = Record<string, any>;

const json = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v, null, 1) ?? 'null');
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: Json) => (typeof b === 'string' ? b : b?.text ?? json(b))).join('\n') : json(content);

const OMITTED_PARAMS = new Set(['messages', 'system', 'tools', 'input', 'instructions']);
const paramsOf = (body: Json): Record<string, unknown> => Object.fromEntries(Object.entries(body).filter(([k]) => !OMITTED_PARAMS.has(k)));

function anthropicPart(b: Json): ReadablePart {
  switch (b?.type) {
    case 'text':
      return { kind: 'text', text: String(b.text ?? '') };
    case 'thinking':
      return { kind: 'reasoning', text: String(b.thinking ?? '') };
    case 'redacted_thinking':
      return { kind: 'reasoning', text: '', redacted: true };
    case 'tool_use':
    case 'server_tool_use':
      return { kind: 'tool_call', id: String(b.id), name: String(b.name), input: json(b.input) };
    case 'tool_result':
      return { kind: 'tool_result', id: String(b.tool_use_id), text: textOf(b.content), ...(b.is_error ? { error: true } : {}) };
    case 'image':
      return { kind: 'image', media: String(b.source?.media_type ?? b.source?.type ?? 'image') };
    default:
      return { kind: 'other', type: String(b?.type ?? typeof b), json: json(b) };
  }
}

const anthropicParts = (content: unknown): ReadablePart[] => (typeof content === 'string' ? [{ kind: 'text', text: content }] : Array.isArray(content) ? content.map(anthropicPart) : []);

function chatParts(m: Json): ReadablePart[] {
  const parts: ReadablePart[] = [];
  if (typeof m.reasoning_content === 'string' && m.reasoning_content) parts.push({ kind: 'reasoning', text: m.reasoning_content });
  if (m.role === 'tool') return [...parts, { kind: 'tool_result', id: String(m.tool_call_id), text: textOf(m.content) }];
  if (typeof m.content === 'string') {
    if (m.content) parts.push({ kind: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    for (const c of m.content as Json[]) parts.push(c?.type === 'text' ? { kind: 'text', text: String(c.text) } : c?.type === 'image_url' ? { kind: 'image', media: 'image_url' } : { kind: 'other', type: String(c?.type), json: json(c) });
  }
  for (const t of (m.tool_calls ?? []) as Json[]) parts.push({ kind: 'tool_call', id: String(t.id), name: String(t.function?.name ?? t.name), input: json(t.function?.arguments ?? t.arguments) });
  return parts;
}

function responsesContent(c: Json): ReadablePart {
  if (/text$/.test(String(c?.type))) return { kind: 'text', text: String(c.text) };
  if (c?.type === 'refusal') return { kind: 'text', text: String(c.refusal) };
  if (c?.type === 'input_image') return { kind: 'image', media: 'input_image' };
  if (c?.type === 'encrypted_content') return { kind: 'encrypted', chars: String(c.encrypted_content ?? '').length };
  return { kind: 'other', type: String(c?.type), json: json(c) };
}

/** A Responses item: a message becomes a turn; the other items are parts of the turn of the role that made them. */
function responsesItem(item: Json): { role: string; parts: ReadablePart[] } {
  const content = (c: unknown): ReadablePart[] => (typeof c === 'string' ? [{ kind: 'text', text: c }] : ((c ?? []) as Json[]).map(responsesContent));
  switch (item?.type) {
    case 'message':
    case undefined:
      return { role: String(item?.role ?? 'user'), parts: content(item?.content) };
    case 'agent_message':
      // multi_agent v2: one agent's message to another (Codex 0.140+)
      return { role: `agent ${item.author ?? '?'} → ${item.recipient ?? '?'}`, parts: content(item.content) };
    case 'reasoning':
      return { role: 'assistant', parts: [{ kind: 'reasoning', text: ((item.summary ?? []) as Json[]).map((s) => s.text).join('\n') || ((item.content ?? []) as Json[]).map((s) => s.text).join('\n'), ...(item.encrypted_content ? { redacted: true } : {}) }] };
    case 'function_call':
    case 'custom_tool_call':
      return { role: 'assistant', parts: [{ kind: 'tool_call', id: String(item.call_id), name: String(item.name), input: json(item.arguments ?? item.input) }] };
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { role: 'tool', parts: [{ kind: 'tool_result', id: String(item.call_id), text: textOf(item.output) }] };
    default:
      return { role: 'assistant', parts: [{ kind: 'other', type: String(item.type), json: json(item) }] };
  }
}

/** Consecutive items of one role are one turn (a Responses input lists reasoning, calls and outputs as items). */
function mergeTurns(items: { role: string; parts: ReadablePart[] }[]): ReadableTurn[] {
  const turns: ReadableTurn[] = [];
  for (const item of items) {
    const last = turns[turns.length - 1];
    if (last && last.role === item.role && item.role !== 'user') last.parts.push(...item.parts);
    else turns.push({ role: item.role, parts: [...item.parts] });
  }
  return turns;
}

const toolsOf = (tools: unknown): ReadableRequest['tools'] =>
  Array.isArray(tools) ? tools.map((t: Json) => ({ name: String(t.name ?? t.function?.name ?? t.type), description: String(t.description ?? t.function?.description ?? '') })) : [];

/** The request body as the model saw it, by protocol. */
export function readableRequest(protocol: string, body: unknown): ReadableRequest {
  const b = (body && typeof body === 'object' ? body : {}) as Json;
  if (protocol === 'anthropic-messages') {
    const system = typeof b.system === 'string' ? [b.system] : Array.isArray(b.system) ? (b.system as Json[]).map((s) => String(s.text ?? json(s))) : [];
    return { system, turns: ((b.messages ?? []) as Json[]).map((m) => ({ role: String(m.role), parts: anthropicParts(m.content) })), tools: toolsOf(b.tools), params: paramsOf(b) };
  }
  if (protocol === 'openai-chat-completions') {
    const messages = (b.messages ?? []) as Json[];
    const isSystem = (m: Json) => m.role === 'system' || m.role === 'developer';
    return { system: messages.filter(isSystem).map((m) => textOf(m.content)), turns: messages.filter((m) => !isSystem(m)).map((m) => ({ role: String(m.role), parts: chatParts(m) })), tools: toolsOf(b.tools), params: paramsOf(b) };
  }
  if (protocol === 'openai-responses') {
    const input = typeof b.input === 'string' ? [{ type: 'message', role: 'user', content: b.input }] : ((b.input ?? []) as Json[]);
    const system = [...(b.instructions ? [String(b.instructions)] : []), ...input.filter((i) => i.type === 'message' && (i.role === 'system' || i.role === 'developer')).map((i) => textOf(i.content))];
    const rest = input.filter((i) => !(i.type === 'message' && (i.role === 'system' || i.role === 'developer')));
    return { system, turns: mergeTurns(rest.map(responsesItem)), tools: toolsOf(b.tools), params: paramsOf(b) };
  }
  return { system: [], turns: [{ role: 'request', parts: [{ kind: 'other', type: protocol, json: json(body) }] }], tools: [], params: {} };
}

/** The reassembled response (call.output), by protocol. */
export function readableResponse(protocol: string, output: unknown): ReadableResponse {
  const o = (output && typeof output === 'object' ? output : {}) as Json;
  if (output === null || output === undefined) return { parts: [], stop_reason: null };
  if (protocol === 'anthropic-messages') return { parts: anthropicParts(o.content), stop_reason: o.stop_reason ?? null };
  if (protocol === 'openai-chat-completions') {
    const choice = ((o.choices ?? []) as Json[])[0];
    return { parts: choice ? chatParts({ role: 'assistant', ...choice.message }) : [], stop_reason: choice?.finish_reason ?? null };
  }
  if (protocol === 'openai-responses') return { parts: ((o.output ?? []) as Json[]).flatMap((i) => responsesItem(i).parts), stop_reason: o.status ?? null };
  return { parts: [{ kind: 'other', type: protocol, json: json(output) }], stop_reason: null };
}
