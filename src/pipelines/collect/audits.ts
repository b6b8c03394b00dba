import type { Actf } from '../../schemas/actf.js';
import { wireProtocol } from '../../transforms/protocols/index.js';
import type { Call } from '../../schemas/call.js';

type Json = Record<string, any>;

export interface CompletionAudit {
  status: 'flagged' | 'not_flagged' | 'not_observable';
  reason: string | null;
  /** Where the finding came from: the last captured response of the main participant, or the ACTF. */
  source: 'wire' | 'actf' | null;
  actf_stop_reason: string | null;
  /** The ACTF's own finding when the wire overrode it (seeds/003 actf_completion_audit): kept, not lost. */
  actf_finding?: { status: CompletionAudit['status']; reason: string | null };
}

export interface ModelIdentityAudit {
  status: 'match' | 'name_mismatch' | 'not_observable';
  requested_models: string[];
  response_models: string[];
  finish_reasons: string[];
  /** Each request (retries included), in order: the model asked for, the model the response named, how it ended. */
  requests: { call_id: string; requested_model: string | null; response_model: string | null; finish_reason: string | null }[];
}

/** Finish reasons that mean the output-token (or context) limit cut the answer. */
export const TOKEN_LIMIT = new Set(['max_tokens', 'length', 'max_output_tokens', 'model_context_window_exceeded']);

/** The finish reason a response declares, in its protocol's shape (null when it declares none). */
export function finishReasonOf(call: Call): string | null {
  const o = call.output as Json | null;
  return o ? (wireProtocol(call.protocol)?.finishReason(o) ?? null) : null;
}

function hasAnswerOrToolCall(call: Call): boolean {
  const o = call.output as Json | null;
  return o ? (wireProtocol(call.protocol)?.hasAnswerOrToolCall(o) ?? false) : false;
}

/**
 * completion_audit (seeds/003 §6.2): the main participant's final response ended at a token limit, or is an
 * empty answer without tool calls — the trajectory is incomplete. A final response that says so flags it
 * even when the ACTF says stop; an earlier truncated response followed by a completed one does not. An
 * unknown finish reason is never read as complete or incomplete.
 */
export function completionAudit(rootCalls: readonly Call[], actf: Actf | null): CompletionAudit {
  const actfStop = actf?.steps.at(-1)?.stop_reason ?? null;
  const fromActf = actfCompletion(actfStop);
  const wire = wireCompletion(rootCalls, actfStop);
  if (!wire) return fromActf;
  // The wire's final response wins; where the ACTF found otherwise, its finding stays beside it.
  return wire.status !== fromActf.status && fromActf.status !== 'not_observable' ? { ...wire, actf_finding: { status: fromActf.status, reason: fromActf.reason } } : wire;
}

function wireCompletion(rootCalls: readonly Call[], actfStop: string | null): CompletionAudit | undefined {
  const last = [...rootCalls].sort((a, b) => a.seq - b.seq).at(-1);
  if (last) {
    const reason = finishReasonOf(last);
    if (reason && TOKEN_LIMIT.has(reason)) return { status: 'flagged', reason: `the final response stopped at a token limit (${reason})`, source: 'wire', actf_stop_reason: actfStop };
    if (reason === 'incomplete') return { status: 'flagged', reason: 'the final response is incomplete', source: 'wire', actf_stop_reason: actfStop };
    if (reason !== null && !hasAnswerOrToolCall(last)) return { status: 'flagged', reason: 'the final response is an empty answer without tool calls', source: 'wire', actf_stop_reason: actfStop };
    if (reason !== null) return { status: 'not_flagged', reason: null, source: 'wire', actf_stop_reason: actfStop };
  }
  return undefined;
}

function actfCompletion(actfStop: string | null): CompletionAudit {
  if (actfStop && TOKEN_LIMIT.has(actfStop)) return { status: 'flagged', reason: `the last step stopped at a token limit (${actfStop})`, source: 'actf', actf_stop_reason: actfStop };
  if (actfStop) return { status: 'not_flagged', reason: null, source: 'actf', actf_stop_reason: actfStop };
  return { status: 'not_observable', reason: 'no final response and no ACTF stop reason to read', source: null, actf_stop_reason: null };
}

/**
 * model_identity_audit: the models requests asked for and responses named, per the server's own words (not
 * proof of routing). A differing name is a warning, never an exclusion: aliases are legitimate.
 */
export function modelIdentityAudit(calls: readonly Call[]): ModelIdentityAudit {
  const requested = [...new Set(calls.map((c) => c.request_model).filter((m): m is string => m !== null))].sort();
  const responded = [...new Set(calls.map((c) => c.response_model).filter((m): m is string => m !== null))].sort();
  const finish = [...new Set(calls.map(finishReasonOf).filter((r): r is string => r !== null))].sort();
  const pairs = calls.filter((c) => c.request_model !== null && c.response_model !== null);
  const status = pairs.length === 0 ? 'not_observable' : pairs.every((c) => c.request_model === c.response_model) ? 'match' : 'name_mismatch';
  // Per request too (seeds/003): which request asked for what and what answered it, in request order.
  const requests = [...calls].sort((a, b) => a.seq - b.seq).map((c) => ({ call_id: c.call_id, requested_model: c.request_model, response_model: c.response_model, finish_reason: finishReasonOf(c) }));
  return { status, requested_models: requested, response_models: responded, finish_reasons: finish, requests };
}

/** Reasoning levels each harness takes (`--thinking`), and how it asks for them. */
export interface WireEffortAudit {
  status: 'matched' | 'mismatch' | 'unverified' | 'not_observable';
  requested: string;
  /** Per request: what its body asked for (null: the control was omitted). */
  observed: (string | null)[];
  /** wire: the captured requests; native: the harness's own request snapshots (no call was captured). */
  source: 'wire' | 'native';
}

/**
 * wire_effort_audit: every outgoing request (retries included) against the requested level — Anthropic
 * `output_config.effort`, Responses `reasoning.effort`, Chat `reasoning_effort`. An explicit other value is a
 * mismatch; an omitted control is unverified; no readable request is not observable. It describes what the
 * client sent, not what the provider did.
 */
export function wireEffortAudit(calls: readonly Call[], requested: string, nativeSnapshots: readonly Json[] = []): WireEffortAudit {
  // No captured request (--wire-trace off): the harness's own snapshots of what it sent, said as such (seeds/003).
  const native = calls.length === 0 && nativeSnapshots.length > 0;
  const observed = (native ? nativeSnapshots : calls.map((c) => c.context as Json | null)).map(requestedEffort);
  const status = observed.length === 0 ? 'not_observable' : observed.some((v) => v !== null && v !== requested) ? 'mismatch' : observed.some((v) => v === null) ? 'unverified' : 'matched';
  return { status, requested, observed, source: native ? 'native' : 'wire' };
}

/** A request's reasoning control: Anthropic `output_config.effort`, Responses `reasoning.effort`, Chat `reasoning_effort`. */
function requestedEffort(b: Json | null | undefined): string | null {
  // Anthropic's thinking {type: 'disabled'} is the request of `off` (Claude Code sends it with no effort then).
  const v = b?.thinking?.type === 'disabled' ? 'off' : (b?.output_config?.effort ?? b?.reasoning?.effort ?? b?.reasoning_effort);
  return typeof v === 'string' ? v : null;
}

export interface ThinkingAudit {
  /** mismatch: `off` was requested, yet the ACTF holds visible reasoning (seeds/003: a warning, and no linear SFT). */
  status: 'visible_reasoning' | 'no_visible_reasoning' | 'not_observable' | 'mismatch';
  requested: string;
  /** ACTF steps with visible reasoning kept. */
  steps_with_reasoning: number;
}

/**
 * thinking_audit: visible reasoning retained in the ACTF under an explicitly requested level. With
 * --no-keep-thinking nothing can be observed (an empty field is no evidence that the model did not reason);
 * no visible reasoning is not proof that reasoning was off.
 */
export function thinkingAudit(actf: Actf | null, requested: string, keepThinking: boolean): ThinkingAudit {
  if (!keepThinking || !actf) return { status: 'not_observable', requested, steps_with_reasoning: 0 };
  const n = actf.steps.filter((s) => {
    const r = (s as { assistant_content?: { reasoning_content?: unknown } }).assistant_content?.reasoning_content;
    return typeof r === 'string' && r.trim() !== '';
  }).length;
  return { status: n === 0 ? 'no_visible_reasoning' : requested === 'off' ? 'mismatch' : 'visible_reasoning', requested, steps_with_reasoning: n };
}

export interface DelegationAudit {
  /** unfinished: a sub-agent the sample's answer was built without (it never finished, or was cut off). */
  status: 'no_delegation' | 'finished' | 'unfinished';
  /** Each sub-agent that did not complete: its status and where it was read. */
  not_completed: { participant: string; status: string; status_source: string | null; unfinished: boolean }[];
}

/** A status source naming an interruption (Codex: the turn aborted, the parent's SubAgentActivity interrupted). */
const INTERRUPTED = /#(turn_aborted|SubAgentActivity\.interrupted)$/;

/**
 * delegation_audit: the sample's sub-agents (any depth) that did not complete. One that never finished (running,
 * unknown, missing) or was interrupted (its parent ended first) is unfinished: whatever its parent answered was not
 * its result — the spawn's acknowledgement at best — so the main SFT is not training data. One that failed on its
 * own is a result its parent saw, and is only listed.
 */
export function delegationAudit(participants: readonly { participant: string; role: string; status: string; status_source: string | null }[]): DelegationAudit {
  const children = participants.filter((p) => p.role === 'child');
  const not_completed = children
    .filter((p) => p.status !== 'completed')
    .map((p) => ({ participant: p.participant, status: p.status, status_source: p.status_source, unfinished: p.status !== 'failed' || INTERRUPTED.test(p.status_source ?? '') }));
  return { status: children.length === 0 ? 'no_delegation' : not_completed.some((c) => c.unfinished) ? 'unfinished' : 'finished', not_completed };
}
