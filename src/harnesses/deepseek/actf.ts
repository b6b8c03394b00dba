import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import { requestSetup } from '../../transforms/protocols/request-setup.js';
import type { Call } from '../../schemas/call.js';
import type { ContentBlock } from '../../schemas/content.js';
import { newStep, timingOf } from '../../transforms/actf/step.js';
import { isAssistantMessage } from './participants.js';
import type { DshEvent, DshSession } from './session-log.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
const iso = (t: unknown) => (typeof t === 'number' && Number.isFinite(t) ? new Date(t).toISOString() : null);

/** dsh content blocks as ACTF content: text blocks as they are, anything else kept. */
function blocksOf(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  return (content as Json[]).map((b) => (b.type === 'text' && typeof b.text === 'string' ? { type: 'text', text: b.text } : (b as ContentBlock)));
}

function argumentsOf(raw: unknown): Record<string, unknown> | string {
  if (typeof raw !== 'string') return raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : String(raw);
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // kept raw: the SFT projection says why it cannot use it
  }
  return raw;
}

/** The stop reason of a reply: the `finish` chunk among the events it was assembled from. */
function stopReasonOf(e: DshEvent, bySeq: ReadonlyMap<number, DshEvent>): string | null {
  for (const seq of (e.sourceEventSeqs ?? []) as number[]) {
    const chunk = bySeq.get(seq)?.data.chunk as Json | undefined;
    if (chunk?.type === 'finish') return String(chunk.reason?.kind ?? 'unknown').replace(/-/g, '_');
  }
  return null;
}

/**
 * A dsh session as ACTF: each assistant/message a step (reasoning, text, tool calls), the user/message events
 * before it its user input (the task, and the runtime-context snapshot dsh sends as a user message), each
 * tool/result the observation of its call's step. System prompt and tools: the session's captured request when
 * there is one (joined by its x-deepseek-harness-session-id), else its own request/header event.
 */
export function deepSeekToActf(session: DshSession, calls?: readonly Call[]): Actf {
  const bySeq = new Map(session.events.map((e) => [e.seq, e]));
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  let pending: ContentBlock[] = [];
  let model: string | null = null;
  for (const e of session.events) {
    if (e.type === 'request/context' && typeof e.data.model === 'string') model = e.data.model;
    else if (e.type === 'user/message') pending.push(...blocksOf(e.data.content));
    else if (e.type === 'tool/result') {
      for (const b of (e.data.message?.content ?? []) as Json[]) {
        if (b.type !== 'tool-result') continue;
        const id = String(b.toolCallId);
        (stepOfCall.get(id) ?? steps.at(-1))?.observation.push({ toolCallId: id, content: blocksOf(b.content), isError: b.isError === true });
      }
    } else if (isAssistantMessage(e)) {
      const message = e.data.message as Json;
      const step = newStep(steps.length + 1, pending.length > 0 ? pending : null, iso(e.time));
      pending = [];
      const blocks = (message.content ?? []) as Json[];
      const reasoning = blocks.filter((b) => b.type === 'reasoning').map((b) => String(b.text ?? ''));
      step.assistant_content.reasoning_content = reasoning.length > 0 ? reasoning.join('') : null;
      step.assistant_content.content = blocks.filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join('');
      for (const b of blocks.filter((x) => x.type === 'tool-call')) {
        step.assistant_content.tool_calls.push({ id: String(b.id), name: String(b.name), type: 'function', arguments: argumentsOf(b.arguments) });
        stepOfCall.set(String(b.id), step);
      }
      const u = (e.data.usage ?? {}) as Json;
      step.metric = {
        prompt_tokens_len: n(u.inputTokens) + n(u.cacheReadTokens),
        completion_tokens_len: n(u.outputTokens),
        cache_read_tokens_len: n(u.cacheReadTokens),
        cache_creation_tokens_len: 0,
        reasoning_tokens_len: n(u.reasoningTokens),
        cost_usd: null,
        model: typeof message.source?.model === 'string' ? message.source.model : model,
        llm_call_count: 1,
      };
      step.stop_reason = stopReasonOf(e, bySeq);
      step.native_ids = { message_id: String(message.id) };
      steps.push(step);
    }
  }
  const header = session.events.find((e) => e.type === 'request/header')?.data.header as Json | undefined;
  const wireCall = calls?.find((c) => c.native_identity.session_id === session.header.id && Array.isArray((c.context as Json | null)?.tools));
  const wire = wireCall ? requestSetup(wireCall.protocol, wireCall.context as Json) : undefined;
  const wireSystem = wire?.system ?? [];
  const nativeTools = Array.isArray(header?.tools)
    ? (header.tools as Json[]).map((t) => ({ type: 'function' as const, function: { name: String(t.name), ...(typeof t.description === 'string' ? { description: t.description } : {}), parameters: (t.parameters ?? {}) as Record<string, unknown> } }))
    : null;
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: wire ? wireSystem.join('\n\n') : typeof header?.system === 'string' ? header.system : '',
    system_prompt_source: wire && wireSystem.length > 0 ? 'wire' : typeof header?.system === 'string' ? 'native' : 'none',
    tools: wire ? (wire.tools as Actf['tools'] | null) : nativeTools,
    tools_source: wire ? 'wire' : nativeTools ? 'native_derived' : 'none',
    steps,
    timing: timingOf(steps),
  };
}
