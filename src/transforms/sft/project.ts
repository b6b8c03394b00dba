import type { Actf, ActfStep } from '../../schemas/actf.js';
import type { ContentBlock } from '../../schemas/content.js';
import type { SftMessage, SftRecord } from '../../schemas/sft.js';

export type SftProjection = { status: 'ok'; record: SftRecord } | { status: 'unavailable'; reason: string };

export interface SftOptions {
  /** false (--no-keep-thinking): reasoning is emptied in every assistant message. */
  keepThinking: boolean;
}

const MEDIA = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Content that cannot be exported losslessly: the SFT target is unavailable with this message as the reason. */
export class Unavailable extends Error {}

/** Text, and images as `<image>` placeholders with their data URIs appended to `images`, in order. */
export function flatten(content: string | ContentBlock[] | null, images: string[], where: string): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let out = '';
  for (const b of content as Record<string, any>[]) {
    if (b.type === 'text') out += b.text;
    else if (b.type === 'image') {
      const s = b.source ?? {};
      if (s.type !== 'base64') throw new Unavailable(`${where}: an image that only references a ${s.type ?? 'path'} cannot be exported losslessly`);
      if (!MEDIA.has(s.media_type)) throw new Unavailable(`${where}: unsupported image media type '${s.media_type}'`);
      if (typeof s.data !== 'string' || !BASE64.test(s.data)) throw new Unavailable(`${where}: malformed base64 image data`);
      images.push(`data:${s.media_type};base64,${s.data}`);
      out += '<image>';
    } else throw new Unavailable(`${where}: a '${b.type}' block cannot be exported losslessly`);
  }
  return out;
}

/** The callable names a tool definition offers: nested or flat functions, custom tools, namespace members. */
export function toolNames(t: Record<string, any>): string[] {
  if (t.type === 'namespace') return ((t.tools ?? []) as Record<string, any>[]).flatMap((s) => toolNames(s).map((n) => `${t.name}/${n}`));
  const name = t.type === 'function' ? (t.function?.name ?? t.name) : t.name;
  return typeof name === 'string' ? [name] : [];
}

/** A call's name as the tools schema spells it: "namespace/name" for a namespaced Responses tool. */
const qualified = (c: { name: string; namespace?: string | undefined }) => (c.namespace ? `${c.namespace}/${c.name}` : c.name);

function projectStep(step: ActfStep, tools: Set<string>, customTools: Set<string>, images: string[], options: SftOptions, seen: Set<string>): SftMessage[] {
  const where = `step ${step.step_id}`;
  const messages: SftMessage[] = [];
  if (step.user_content !== null) messages.push({ role: 'user', content: flatten(step.user_content, images, `${where} user content`) });
  const calls = step.assistant_content.tool_calls;
  for (const call of calls) {
    if (!call.id) throw new Unavailable(`${where}: a tool call without an id`);
    if (seen.has(call.id)) throw new Unavailable(`${where}: tool call id '${call.id}' is not unique`);
    seen.add(call.id);
    const name = qualified(call);
    if (!tools.has(name)) throw new Unavailable(`${where}: tool '${name}' is not in the tools schema`);
    if (typeof call.arguments === 'string' && !customTools.has(name)) {
      throw new Unavailable(`${where}: arguments of '${name}' are a string, not a JSON object`);
    }
  }
  messages.push({
    role: 'assistant',
    reasoning_content: options.keepThinking ? (step.assistant_content.reasoning_content ?? '') : '',
    content: flatten(step.assistant_content.content, images, `${where} assistant content`),
    tool_calls: calls.map((c) => ({ id: c.id, type: c.type, function: { name: qualified(c), arguments: c.arguments } })),
  });
  const ids = new Set(calls.map((c) => c.id));
  for (const r of step.observation) {
    if (!ids.has(r.toolCallId)) throw new Unavailable(`${where}: a tool result for '${r.toolCallId}', a call of another step (linear SFT needs it in the same step)`);
  }
  for (const c of calls) {
    const results = step.observation.filter((r) => r.toolCallId === c.id);
    if (results.length !== 1) throw new Unavailable(`${where}: tool call '${c.id}' has ${results.length} results (exactly one is required)`);
    messages.push({ role: 'tool', tool_call_id: c.id, content: flatten(results[0]!.content, images, `${where} result of ${c.id}`) });
  }
  return messages;
}

/**
 * The linear SFT record of an ACTF trajectory (seeds/003 §4.3), shared by every harness. Anything that
 * cannot be exported losslessly makes SFT unavailable with the reason — never a silent drop.
 */
export function projectSft(actf: Actf, options: SftOptions): SftProjection {
  try {
    const hasCalls = actf.steps.some((s) => s.assistant_content.tool_calls.length > 0);
    if (actf.tools === null && hasCalls) throw new Unavailable('the trajectory calls tools but no tools schema was captured');
    const tools = (actf.tools ?? []) as Record<string, any>[];
    const names = new Set(tools.flatMap(toolNames));
    const custom = new Set(
      tools.flatMap((t) => (t.type === 'custom' ? toolNames(t) : t.type === 'namespace' ? ((t.tools ?? []) as Record<string, any>[]).filter((s) => s.type === 'custom').flatMap((s) => toolNames(s).map((n) => `${t.name}/${n}`)) : [])),
    );
    const images: string[] = [];
    const seen = new Set<string>();
    const messages: SftMessage[] = [];
    if (actf.system_prompt !== '') messages.push({ role: 'system', content: actf.system_prompt });
    for (const step of actf.steps) messages.push(...projectStep(step, names, custom, images, options, seen));
    if (!messages.some((m) => m.role === 'user')) throw new Unavailable('no user message');
    if (!messages.some((m) => m.role === 'assistant' && (m.content !== '' || m.tool_calls.length > 0))) throw new Unavailable('no non-empty assistant message');
    const record: SftRecord = { messages, tools: tools as SftRecord['tools'] };
    if (images.length > 0) record.images = images;
    return { status: 'ok', record };
  } catch (err) {
    if (err instanceof Unavailable) return { status: 'unavailable', reason: err.message };
    throw err;
  }
}
