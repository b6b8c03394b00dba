import type { Call, CallTokenIds } from '../../schemas/call.js';

type Json = Record<string, any>;

/** Where an agent's next prompt stopped continuing its previous call's prompt + completion, and why if it can be told. */
export interface TokenBreak {
  participant_id: string;
  call_id: string;
  previous_call_id: string;
  /** The first position (in the previous prompt + completion) the new prompt differs at. */
  at_token: number;
  /** What the previous call's ids held there, and what the new prompt holds (null: it ended). */
  expected: number | null;
  found: number | null;
  reason: string;
}

export interface TokenContinuityResult {
  /** Calls with prompt ids, and those checked (each participant's second call on). */
  calls_with_ids: number;
  checked: number;
  continuous: number;
  breaks: TokenBreak[];
}

type Ids = ArrayLike<number>;

/** The longest common prefix of two id lists. */
export function sharedPrefix(a: Ids, b: Ids): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * The token-continuity audit and the prompt compression, in one pass over a capture's calls in request order: per
 * agent, does each call's prompt begin with its previous call's prompt + completion? Where it does not, the break is
 * recorded with why, as far as the two requests tell it; either way the prompt is stored as the prefix it shares
 * with the previous call plus its own suffix (CallTokenIds.prompt_prefix), so an agent's ids grow linearly.
 * Holds one id list per agent (its last call's), never the calls.
 */
export class TokenContinuity {
  // Typed arrays: an agent's ids are copied once per call as memory blocks, not element by element.
  private readonly last = new Map<string, { callId: string; ids: Uint32Array; output: Json | null }>();
  private readonly plan = new Map<string, { call_id: string; length: number }>();
  private readonly result: TokenContinuityResult = { calls_with_ids: 0, checked: 0, continuous: 0, breaks: [] };

  observe(c: Call): void {
    const t = c.token_ids;
    if (!t?.prompt || c.participant_id === null) return;
    const whole = callIds(t, (id) => (this.last.get(c.participant_id!)?.callId === id ? this.last.get(c.participant_id!)!.ids : undefined));
    if (!whole) return;
    const prompt = whole.ids.subarray(0, whole.promptLength);
    this.result.calls_with_ids++;
    const before = this.last.get(c.participant_id);
    if (before) {
      this.result.checked++;
      const shared = sharedPrefix(prompt, before.ids);
      if (shared > 0) this.plan.set(c.call_id, { call_id: before.callId, length: shared });
      if (shared === before.ids.length) this.result.continuous++;
      else this.result.breaks.push({ participant_id: c.participant_id, call_id: c.call_id, previous_call_id: before.callId, at_token: shared, expected: before.ids[shared] ?? null, found: prompt[shared] ?? null, reason: breakReason(before.output, c.context as Json | null) });
    }
    this.last.set(c.participant_id, { callId: c.call_id, ids: whole.ids, output: (c.output as Json | null) ?? null });
  }

  /** The call's token ids as published: its prompt as the shared prefix of its agent's previous call plus the rest. */
  compressed(c: Call): Call {
    const p = this.plan.get(c.call_id);
    if (!p || !c.token_ids?.prompt || c.token_ids.prompt_prefix) return c;
    return { ...c, token_ids: { ...c.token_ids, prompt_prefix: p, prompt: c.token_ids.prompt.slice(p.length) } };
  }

  finish(): TokenContinuityResult {
    return this.result;
  }
}

/** A stored prompt expanded: its prefix (the named call's prompt + completion, as `full` gives it) then its own ids. */
export function expandedPrompt(t: CallTokenIds, full: (callId: string) => readonly number[] | undefined): number[] | null {
  if (!t.prompt) return null;
  if (!t.prompt_prefix) return t.prompt;
  const before = full(t.prompt_prefix.call_id);
  if (!before || before.length < t.prompt_prefix.length) return null;
  return [...before.slice(0, t.prompt_prefix.length), ...t.prompt];
}

/**
 * A call's whole ids as one typed array — its prompt expanded (the prefix copied as one block) then its completion —
 * and where the prompt ends: `ids.subarray(0, promptLength)` is the prompt, without a copy.
 */
export function callIds(t: CallTokenIds, full: (callId: string) => Uint32Array | undefined): { ids: Uint32Array; promptLength: number } | null {
  if (!t.prompt) return null;
  const completion = t.completion ?? [];
  const prefix = t.prompt_prefix?.length ?? 0;
  const before = t.prompt_prefix ? full(t.prompt_prefix.call_id) : undefined;
  if (t.prompt_prefix && (!before || before.length < prefix)) return null;
  const promptLength = prefix + t.prompt.length;
  const ids = new Uint32Array(promptLength + completion.length);
  if (before) ids.set(before.subarray(0, prefix));
  ids.set(t.prompt, prefix);
  ids.set(completion, promptLength);
  return { ids, promptLength };
}

/** Why a prompt did not continue the previous call, from the two requests (Chat Completions messages). */
function breakReason(previousOutput: Json | null, context: Json | null): string {
  const answer = previousOutput?.choices?.[0]?.message as Json | undefined;
  const messages = Array.isArray(context?.messages) ? (context!.messages as Json[]) : null;
  if (!answer || !messages) return 'not told by the requests (no Chat Completions messages to compare)';
  const resent = messages.filter((m) => m.role === 'assistant');
  const same = resent.find((m) => sameCalls(m, answer) && text(m.content) === text(answer.content));
  if (!same) return resent.some((m) => sameCalls(m, answer)) ? "history rewritten: the previous answer's text is re-sent changed" : 'history rewritten or compacted: the previous answer is not re-sent';
  if (text(answer.reasoning_content ?? answer.reasoning) !== '' && text(same.reasoning_content ?? same.reasoning) === '') return 'a reasoning block dropped: the previous answer is re-sent without its reasoning';
  return 'the harness re-rendered earlier messages (the previous answer is re-sent as it was; something before it changed)';
}

const text = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((p) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';

const sameCalls = (a: Json, b: Json): boolean => JSON.stringify((a.tool_calls ?? []).map((t: Json) => t.id)) === JSON.stringify((b.tool_calls ?? []).map((t: Json) => t.id));
