import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import { newStep } from '../../transforms/actf/step.js';
import type { CodexThread } from './rollout.js';

type Json = Record<string, any>;

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? (content as Json[]).map((c) => (typeof c.text === 'string' ? c.text : '')).join('')
      : '';

/** Context Codex injects as user messages before the task (not the user's words). */
const INJECTED = /^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions|<permissions instructions>)/;

export interface CodexActfOptions {
  /** Captured calls of this thread (thread-id header): the source of the tool definitions, never inferred. */
  wire?: readonly Call[];
}

/**
 * ACTF of one Codex thread (seeds/003 §4.2). A step is one model response: its output items (reasoning
 * summaries, function / custom tool calls, the assistant message) up to the response's token_usage_record.
 * System = base instructions + developer messages + injected environment context before the first turn.
 * Tools come only from captured Responses requests, with every request's snapshot kept in tools_capture.
 */
export function codexToActf(thread: CodexThread, options: CodexActfOptions = {}): Actf {
  const system: string[] = [];
  if (typeof thread.meta.base_instructions?.text === 'string') system.push(thread.meta.base_instructions.text);
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  let pending: string | null = null;
  let current: { step: ActfStep; text: string[]; reasoning: string[] } | undefined;
  let firstTs: string | null = null;
  let lastTs: string | null = null;

  const open = (ts: string | null) => {
    if (current) return current;
    const step = newStep(steps.length + 1, pending, ts);
    pending = null;
    steps.push(step);
    current = { step, text: [], reasoning: [] };
    return current;
  };
  const close = () => {
    if (!current) return;
    current.step.assistant_content.content = current.text.join('\n\n');
    current.step.assistant_content.reasoning_content = current.reasoning.length > 0 ? current.reasoning.join('\n\n') : null;
    current = undefined;
  };

  for (const { record } of thread.own) {
    const ts = typeof record.timestamp === 'string' ? record.timestamp : null;
    const p = (record.payload ?? {}) as Json;
    if (record.type === 'response_item') {
      if (ts) {
        firstTs ??= ts;
        lastTs = ts;
      }
      if (p.type === 'message' && (p.role === 'developer' || p.role === 'system')) {
        if (steps.length === 0) system.push(textOf(p.content));
        else pending = pending === null ? textOf(p.content) : `${pending}\n\n${textOf(p.content)}`;
      } else if (p.type === 'message' && p.role === 'user') {
        const text = textOf(p.content);
        if (steps.length === 0 && INJECTED.test(text)) system.push(text);
        else {
          close();
          pending = pending === null ? text : `${pending}\n\n${text}`;
        }
      } else if (p.type === 'agent_message') {
        close();
        pending = pending === null ? textOf(p.content) : `${pending}\n\n${textOf(p.content)}`;
      } else if (p.type === 'reasoning') {
        const c = open(ts);
        for (const s of (p.summary ?? []) as Json[]) if (typeof s.text === 'string') c.reasoning.push(s.text);
      } else if (p.type === 'function_call' || p.type === 'custom_tool_call') {
        const c = open(ts);
        let args: Record<string, unknown> | string = p.type === 'custom_tool_call' ? String(p.input ?? '') : String(p.arguments ?? '');
        if (p.type === 'function_call') {
          try {
            const parsed: unknown = JSON.parse(args as string);
            if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
          } catch {
            // kept as the raw string: SFT will say it is not a JSON object, never guess
          }
        }
        c.step.assistant_content.tool_calls.push({
          id: p.call_id,
          name: p.name,
          type: p.type === 'custom_tool_call' ? 'custom' : 'function',
          arguments: args,
          ...(typeof p.namespace === 'string' ? { namespace: p.namespace } : {}),
        });
        stepOfCall.set(p.call_id, c.step);
      } else if (p.type === 'message' && p.role === 'assistant') {
        open(ts).text.push(textOf(p.content));
      } else if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') {
        const owner = stepOfCall.get(p.call_id) ?? steps.at(-1);
        owner?.observation.push({ toolCallId: p.call_id, content: typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null), isError: false });
      }
    } else if (record.type === 'token_usage_record') {
      const c = open(ts);
      const u = (p.usage ?? {}) as Json;
      const num = (x: unknown) => (typeof x === 'number' && x >= 0 ? x : 0);
      c.step.metric = {
        prompt_tokens_len: num(u.input_tokens) + num(u.cache_write_input_tokens),
        completion_tokens_len: num(u.output_tokens),
        cache_read_tokens_len: num(u.cached_input_tokens),
        cache_creation_tokens_len: num(u.cache_write_input_tokens),
        reasoning_tokens_len: num(u.reasoning_output_tokens),
        cost_usd: null,
        model: null,
        llm_call_count: 1,
      };
      c.step.native_ids = { response_id: p.response_id };
      c.step.finished_at = ts ?? c.step.finished_at;
      c.step.stop_reason = c.step.assistant_content.tool_calls.length > 0 ? 'tool_calls' : 'stop';
      close();
    }
  }
  close();

  const mine = options.wire?.filter((c) => c.protocol === 'openai-responses' && c.context && typeof c.context === 'object' && Array.isArray((c.context as Json).tools));
  const first = mine?.find((c) => (c.context as Json).generate !== false);
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: system.join('\n\n'),
    system_prompt_source: system.length > 0 ? 'native' : 'none',
    tools: first ? ((first.context as Json).tools as Actf['tools']) : null,
    tools_source: first ? 'wire' : 'none',
    ...(mine && mine.length > 0 ? { tools_capture: mine.map((c) => ({ seq: c.seq, call_id: c.call_id, tools: (c.context as Json).tools })) } : {}),
    steps,
    timing: {
      started_at: firstTs,
      finished_at: lastTs,
      duration_ms: firstTs && lastTs ? Math.max(0, Date.parse(lastTs) - Date.parse(firstTs)) : null,
    },
  };
}
