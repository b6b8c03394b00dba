import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import { requestSetup } from '../../transforms/protocols/request-setup.js';
import type { Call } from '../../schemas/call.js';
import { newStep, timingOf } from '../../transforms/actf/step.js';
import { sessionVersion, wireOutput } from './tokens.js';
import type { OpenCodeStore } from './store.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

/**
 * ACTF of OpenCode's root session (seeds/003 §4.2): one step per assistant message (OpenCode writes one per
 * model call), its reasoning, text and tool parts in order; a tool part's output is the observation of its
 * call. User messages feed the next step's user_content. System prompt and tools come only from the
 * captured Chat Completions requests of that session (x-session-id) — the store keeps neither.
 */
export function openCodeToActf(store: OpenCodeStore, sessionId: string, options: { wire?: readonly Call[] } = {}): Actf {
  const steps: ActfStep[] = [];
  let pending: string | null = null;
  const messages = store.messages.filter((m) => m.sessionId === sessionId);
  const session = store.sessions.find((x) => x.id === sessionId);
  const version = session ? sessionVersion(session.row) : null;
  for (const m of messages) {
    const parts = store.parts.filter((p) => p.messageId === m.id);
    if (m.data.role === 'user') {
      const text = parts.filter((p) => p.data.type === 'text' && p.data.synthetic !== true).map((p) => String(p.data.text ?? '')).join('\n\n');
      pending = pending === null ? text : `${pending}\n\n${text}`;
      continue;
    }
    if (m.data.role !== 'assistant') continue;
    const step = newStep(steps.length + 1, pending, iso(m.data.time?.created));
    pending = null;
    const text: string[] = [];
    const reasoning: string[] = [];
    for (const p of parts) {
      const d = p.data;
      if (d.type === 'text') text.push(String(d.text ?? ''));
      else if (d.type === 'reasoning') reasoning.push(String(d.text ?? ''));
      else if (d.type === 'tool') {
        const input = d.state?.input;
        step.assistant_content.tool_calls.push({ id: String(d.callID), name: String(d.tool), type: 'function', arguments: input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {} });
        if (d.state?.status === 'completed' || d.state?.status === 'error') {
          step.observation.push({ toolCallId: String(d.callID), content: String(d.state.status === 'error' ? (d.state.error ?? '') : (d.state.output ?? '')), isError: d.state.status === 'error' });
        }
      }
    }
    step.assistant_content.content = text.join('\n\n');
    step.assistant_content.reasoning_content = reasoning.length > 0 ? reasoning.join('\n\n') : null;
    const t = m.data.tokens ?? {};
    step.metric = {
      prompt_tokens_len: n(t.input) + n(t.cache?.read) + n(t.cache?.write),
      completion_tokens_len: wireOutput(t, version) ?? n(t.output),
      cache_read_tokens_len: n(t.cache?.read),
      cache_creation_tokens_len: n(t.cache?.write),
      reasoning_tokens_len: n(t.reasoning),
      cost_usd: typeof m.data.cost === 'number' && m.data.cost > 0 ? m.data.cost : null,
      model: typeof m.data.modelID === 'string' ? m.data.modelID : null,
      llm_call_count: 1,
    };
    step.finished_at = iso(m.data.time?.completed) ?? step.started_at;
    step.stop_reason = m.data.finish === 'tool-calls' ? 'tool_calls' : typeof m.data.finish === 'string' ? m.data.finish : null;
    step.native_ids = { message_id: m.id };
    steps.push(step);
  }
  // The agent's own requests (they offer tools); the title requests do not.
  // The session's calls by its header; releases before 1.17 send none: a store of one session owns every call of its capture.
  const sole = store.sessions.length === 1 && options.wire?.every((c) => c.native_identity.session_id === undefined);
  const mine = options.wire?.filter((c) => (sole || c.native_identity.session_id === sessionId) && Array.isArray((c.context as Json | null)?.tools));
  const first = mine?.[0];
  const { system, tools } = requestSetup(first?.protocol ?? 'openai-chat-completions', first?.context as Json | undefined);
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: system.join('\n\n'),
    system_prompt_source: system.length > 0 ? 'wire' : 'none',
    tools: first ? (tools as Actf['tools'] | null) : null,
    tools_source: first ? 'wire' : 'none',
    steps,
    timing: timingOf(steps),
  };
}
