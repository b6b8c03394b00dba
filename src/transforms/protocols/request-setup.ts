import type { Protocol } from '../../schemas/call.js';
import { anthropicSystem, anthropicTools } from './anthropic-request.js';
import { contentText } from './wire-protocol.js';

type Json = Record<string, any>;

/**
 * The system prompt and tools a request body gave the model, whatever its protocol: Chat Completions' system and
 * developer messages and tools; Anthropic's `system` and `tools` (input_schema); Responses' `instructions`, system and
 * developer input items, and its flat function tools. Tools as the ACTF / SFT tools schema spells them (nested
 * function schemas; a protocol's own tool kinds kept as they are). What a harness's converter reads from the wire.
 */
export function requestSetup(protocol: Protocol, body: Json | null | undefined): { system: string[]; tools: Json[] | null } {
  if (!body || typeof body !== 'object') return { system: [], tools: null };
  if (protocol === 'anthropic-messages') {
    const system = anthropicSystem(body);
    return { system: system ? [system] : [], tools: Array.isArray(body.tools) ? anthropicTools(body) : null };
  }
  if (protocol === 'openai-responses') {
    const items = Array.isArray(body.input) ? (body.input as Json[]) : [];
    const system = [
      ...(typeof body.instructions === 'string' && body.instructions ? [body.instructions] : []),
      ...items.filter((x) => x.role === 'system' || x.role === 'developer').map((x) => contentText(x.content)),
    ];
    return { system, tools: Array.isArray(body.tools) ? (body.tools as Json[]).map(nestedFunctionTool) : null };
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  return { system: messages.filter((x) => x.role === 'system' || x.role === 'developer').map((x) => contentText(x.content)), tools: Array.isArray(body.tools) ? (body.tools as Json[]) : null };
}

/** A Responses function tool (`{type: function, name, parameters}`) as Chat Completions nests it; other kinds as they are. */
function nestedFunctionTool(t: Json): Json {
  if (t.type !== 'function' || typeof t.name !== 'string') return t;
  return { type: 'function', function: { name: t.name, ...(typeof t.description === 'string' ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object' }, ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}) } };
}
