import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import { newStep, timingOf } from '../../transforms/actf/step.js';
import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';
import type { HermesData, HermesSession } from './store.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
const iso = (s: unknown) => (typeof s === 'number' ? new Date(s * 1000).toISOString() : null);

/**
 * Hermes participants. parent_session_id links two things: a delegate_task child (source "subagent") is a
 * participant of its own; any other child session continues its parent after a compression, so it belongs
 * to the parent's participant. A child's spawning tool call is the parent's delegate_task call when the
 * parent made exactly one (one batched call may spawn several children); with several, it is not guessed.
 */
export function hermesParticipants(data: HermesData): { participants: ParticipantUsage[]; ownerOf: Map<string, string> } {
  const byId = new Map(data.sessions.map((s) => [s.id, s]));
  const ownerOf = new Map<string, string>();
  const owner = (s: HermesSession): string => {
    const known = ownerOf.get(s.id);
    if (known) return known;
    const parent = s.parent_session_id ? byId.get(s.parent_session_id) : undefined;
    const id = s.source !== 'subagent' && parent ? owner(parent) : s.id;
    ownerOf.set(s.id, id);
    return id;
  };
  for (const s of data.sessions) owner(s);
  const heads = data.sessions.filter((s) => ownerOf.get(s.id) === s.id);
  const depth = (s: HermesSession, seen = new Set<string>()): number => {
    const parent = s.parent_session_id ? byId.get(s.parent_session_id) : undefined;
    if (!parent || seen.has(s.id)) return 0;
    seen.add(s.id);
    return (s.source === 'subagent' ? 1 : 0) + depth(parent, seen);
  };
  const participants = heads.map((head): ParticipantUsage => {
    const chain = data.sessions.filter((s) => ownerOf.get(s.id) === head.id);
    const ids = new Set(chain.map((s) => s.id));
    const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
    let cost = 0;
    for (const s of chain) {
      tokens.input += n(s.input_tokens);
      tokens.output += n(s.output_tokens);
      tokens.cache_read += n(s.cache_read_tokens);
      tokens.cache_creation += n(s.cache_write_tokens);
      tokens.reasoning += n(s.reasoning_tokens);
      cost += n(s.estimated_cost_usd);
    }
    const assistants = data.messages.filter((m) => ids.has(m.session_id) && m.role === 'assistant');
    const parentHead = head.source === 'subagent' && head.parent_session_id ? ownerOf.get(head.parent_session_id) ?? null : null;
    let spawn: string | null = null;
    let reason: string | null = null;
    if (head.source === 'subagent' && head.parent_session_id) {
      const calls = data.messages.filter((m) => m.session_id === head.parent_session_id).flatMap((m) => m.tool_calls).filter((c: Json) => c.function?.name === 'delegate_task');
      if (calls.length === 1) spawn = String(calls[0]!.id);
      else reason = `the parent session made ${calls.length} delegate_task calls: which one spawned this child is not recorded`;
    }
    const last = chain.at(-1)!;
    // Before state.db schema 19 (Hermes 0.15.0-0.17.0 here) sessions keep reasoning_tokens 0 though the model reasoned.
    const noReasoning = typeof data.schemaVersion === 'number' && data.schemaVersion < 19;
    return {
      participant: `session:${head.id}`,
      role: parentHead ? 'child' : 'root',
      native_id: head.id,
      parent: parentHead ? `session:${parentHead}` : null,
      spawn_tool_call_id: spawn,
      depth: depth(head),
      tokens,
      ...(noReasoning ? { unknown_kinds: ['reasoning' as const], tokens_note: `this Hermes (state.db schema ${data.schemaVersion}, before 19) counts no reasoning tokens: reasoning unknown, not zero` } : {}),
      messages: assistants.length,
      message_ids: assistants.map((m) => String(m.id)),
      status: last.ended_at ? (last.end_reason && /error|fail/i.test(last.end_reason) ? 'failed' : 'completed') : 'unknown',
      status_source: `${data.source}: sessions ${last.id} (ended_at ${String(last.ended_at ?? 'null')}, end_reason ${String(last.end_reason ?? 'null')})`,
      cost_usd: cost > 0 ? cost : null,
      cost_note: cost > 0 ? 'Hermes estimated_cost_usd (an estimate, not a bill)' : null,
      reason,
      spawn_result: parentHead ? 'result' : null,
    };
  });
  return { participants, ownerOf };
}

/** ACTF of a root participant (its compression chain included): assistant messages as steps, tool rows as observations. */
export function hermesToActf(data: HermesData, rootSession: string, ownerOf: Map<string, string>): Actf {
  const mine = data.messages.filter((m) => ownerOf.get(m.session_id) === rootSession);
  const session = data.sessions.find((s) => s.id === rootSession);
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  const derived = new Map<string, Json>();
  let pending: string | null = null;
  const system: string[] = session?.system_prompt ? [session.system_prompt] : [];
  for (const m of mine) {
    if (m.role === 'system') {
      if (steps.length === 0 && !session?.system_prompt) system.push(m.content ?? '');
    } else if (m.role === 'user') pending = pending === null ? (m.content ?? '') : `${pending}\n\n${m.content ?? ''}`;
    else if (m.role === 'tool') {
      const owner = stepOfCall.get(String(m.tool_call_id)) ?? steps.at(-1);
      owner?.observation.push({ toolCallId: String(m.tool_call_id), content: m.content ?? '', isError: false });
    } else {
      const step = newStep(steps.length + 1, pending, iso(m.timestamp));
      pending = null;
      step.assistant_content.content = m.content ?? '';
      step.assistant_content.reasoning_content = m.reasoning_content ?? m.reasoning ?? null;
      for (const c of m.tool_calls) {
        let args: Record<string, unknown> | string = String(c.function?.arguments ?? '');
        try {
          const parsed: unknown = JSON.parse(args);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
        } catch {
          // kept as the raw string: SFT says it is not a JSON object
        }
        step.assistant_content.tool_calls.push({ id: String(c.id), name: String(c.function?.name), type: 'function', arguments: args });
        // Hermes's store keeps no tool schemas: a permissive one per tool actually called (as for Claude Code without a wire).
        derived.set(String(c.function?.name), { type: 'function', function: { name: String(c.function?.name), parameters: { type: 'object', additionalProperties: true } } });
        stepOfCall.set(String(c.id), step);
      }
      step.stop_reason = m.finish_reason ?? null;
      step.native_ids = { message_id: String(m.id) };
      steps.push(step);
    }
  }
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: system.join('\n\n'),
    system_prompt_source: system.length > 0 ? 'native' : 'none',
    tools: [...derived.values()] as Actf['tools'],
    tools_source: 'native_derived',
    steps,
    timing: timingOf(steps),
  };
}
