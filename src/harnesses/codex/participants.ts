import type { Call } from '../../schemas/call.js';
import { addTokens, zeroTokens, type ParticipantUsage, type SpawnWithoutParticipant, type TokensByKind } from '../../schemas/participant-usage.js';
import { tokensOfCall } from '../../transforms/capture/token-agreement.js';
import { producerVersion, type CodexThread } from './rollout.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);


/** OpenAI counts cached input inside input_tokens; here input excludes it, as for every harness. */
function addUsage(tokens: TokensByKind, u: Json): void {
  tokens.input += Math.max(0, n(u.input_tokens) - n(u.cached_input_tokens));
  tokens.cache_read += n(u.cached_input_tokens);
  tokens.cache_creation += n(u.cache_write_input_tokens);
  tokens.output += n(u.output_tokens);
  tokens.reasoning += n(u.reasoning_output_tokens);
}

export interface ThreadTokens {
  tokens: TokensByKind;
  /** Server response ids, where the rollout names them (token_usage_record); calls join on these. */
  responseIds: string[];
  /** Model responses counted. */
  responses: number;
  status: 'exact' | 'unknown';
  note: string | null;
}

/** The identity header that names a call's thread: thread_id, or (releases that send only that) session_id. */
export const CODEX_CALL_THREAD_FIELDS = ['thread_id', 'session_id'] as const;
export const callThreadId = (c: Call): string | undefined => c.native_identity.thread_id ?? c.native_identity.session_id;

const sameTotals = (a: Json | undefined, b: Json | undefined) => a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
const countOf = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);

/** Each count of `total` less the same count of `previous` (a response's usage, from two running totals). */
function growth(total: Json, previous: Json | undefined): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(total)) if (typeof v === 'number') out[k] = v - (typeof previous?.[k] === 'number' ? previous[k] : 0);
  return out;
}

/**
 * What was read in place of a redundant field a known record lacks (conversion.json read_notes): a token_count's
 * last_token_usage from the growth of total_token_usage; one without total_token_usage makes the thread's count unknown.
 */
export function codexReadNotes(threads: readonly CodexThread[]): string[] {
  const notes: string[] = [];
  for (const t of threads) {
    for (const r of t.own) {
      const info = r.record.type === 'event_msg' && r.record.payload?.type === 'token_count' ? countOf(r.record.payload.info) : undefined;
      if (!info) continue;
      if (!countOf(info.last_token_usage)) notes.push(`${r.file}:${r.line}: token_count without last_token_usage: its response's count is what total_token_usage grew by since the last token_count`);
      else if (!countOf(info.total_token_usage)) notes.push(`${r.file}:${r.line}: token_count without total_token_usage: a repeat cannot be told from a new response, so the thread's tokens are unknown unless the capture gives them`);
    }
  }
  return notes;
}

/**
 * A thread's own tokens, from its own records (a fork's replayed parent prefix is the parent's), by what its
 * release wrote:
 * - token_usage_record (current releases): one per HTTP response, deduplicated by response_id;
 * - else event_msg token_count (0.34 to the releases before token_usage_record): each new total_token_usage
 *   is one response, counted by its last_token_usage — releases repeat a token_count with the same totals, and
 *   a repeat is not a response; the first total after a fork's replay is compared with the replay's last;
 * - else (before 0.34 no release wrote a count): the capture's calls whose identity header names the thread,
 *   when given; otherwise unknown — never zero.
 */
export function threadTokens(thread: CodexThread, wire?: readonly Call[]): ThreadTokens {
  const byResponse = new Map<string, Json>();
  for (const { record } of thread.own) if (record.type === 'token_usage_record') byResponse.set(record.payload.response_id, record.payload.usage ?? {});
  if (byResponse.size > 0) {
    const tokens = zeroTokens();
    for (const u of byResponse.values()) addUsage(tokens, u);
    return { tokens, responseIds: [...byResponse.keys()], responses: byResponse.size, status: 'exact', note: null };
  }
  const own = new Set(thread.own);
  let previous: Json | undefined;
  let responses = 0;
  const tokens = zeroTokens();
  /** A token_count without its total: a repeat cannot be told from a new response there (where, for the note). */
  let untotalled: string | undefined;
  for (const r of thread.records) {
    const info = r.record.type === 'event_msg' && r.record.payload?.type === 'token_count' ? (r.record.payload.info as Json | null) : null;
    if (!info) continue;
    const total = countOf(info.total_token_usage);
    if (!total) {
      if (own.has(r)) untotalled ??= `${r.file}:${r.line}`;
      continue;
    }
    if (own.has(r) && !sameTotals(total, previous)) {
      // No last_token_usage: this response's count is what the total grew by (readNotes says where).
      addUsage(tokens, countOf(info.last_token_usage) ?? growth(total, previous));
      responses += 1;
    }
    previous = total;
  }
  const version = producerVersion(thread.meta);
  const sent = wire?.filter((c) => callThreadId(c) === thread.threadId && c.usage.normalized !== null) ?? [];
  if (sent.length > 0) {
    const fromWire = zeroTokens();
    for (const c of sent) addTokens(fromWire, tokensOfCall(c));
    // Without response ids the rollout's counts cannot be matched call by call: where they fall short of what the
    // server sent this thread (a turn cut off before its count was written), the capture's own counts stand.
    if (responses === 0 || JSON.stringify(fromWire) !== JSON.stringify(tokens)) {
      const why = responses === 0 ? `Codex ${version} wrote no token count in ${thread.file}` : `the rollout's token_count records (${responses} response(s)) are not what the server sent this thread`;
      return { tokens: fromWire, responseIds: [], responses: sent.length, status: 'exact', note: `counted from the capture: ${sent.length} call(s) whose identity header names this thread (${why})` };
    }
  }
  if (untotalled) return { tokens, responseIds: [], responses, status: 'unknown', note: `${untotalled}: a token_count record without total_token_usage, so a repeated count cannot be told from a new response (unknown, not guessed); convert with --wire for the capture's counts` };
  // A fork whose replayed prefix cannot be told from its own records: its counts would include the parent's.
  if (thread.replayUnknown) return { tokens, responseIds: [], responses, status: 'unknown', note: `${thread.file}: ${thread.replayUnknown}, so its token counts may hold the parent's (unknown, not guessed); read it with its parent's rollout, or convert with --wire` };
  if (responses > 0) return { tokens, responseIds: [], responses, status: 'exact', note: `counted from ${responses} event_msg token_count record(s) (Codex ${version} writes no token_usage_record): each new total_token_usage is one response, a repeated total is not` };
  // No count at all: a thread that never began a turn has none to count; one that did (or that holds model output) has tokens no record says.
  const began = thread.own.some(
    (r) =>
      (r.record.type === 'event_msg' && (r.record.payload?.type === 'task_started' || r.record.payload?.type === 'user_message')) ||
      (r.record.type === 'response_item' && ['message', 'function_call', 'reasoning', 'local_shell_call', 'custom_tool_call'].includes(r.record.payload?.type) && r.record.payload?.role !== 'user' && r.record.payload?.role !== 'developer'),
  );
  if (!began) return { tokens, responseIds: [], responses: 0, status: 'exact', note: null };
  // The capture names each call's thread: a thread none of its calls names made no model call (its turn was cut off first).
  if (wire?.some((c) => callThreadId(c) !== undefined)) {
    return { tokens, responseIds: [], responses: 0, status: 'exact', note: `counted from the capture: no call names this thread (its turn in ${thread.file} ended before a model call)` };
  }
  return {
    tokens,
    responseIds: [],
    responses: 0,
    status: 'unknown',
    note: `${thread.file} holds a turn but no token record (${
      thread.meta.legacy === true ? `Codex ${version} writes none` : `Codex ${version} wrote no token_count for it, e.g. a turn cut off before its response was recorded`
    }): its tokens are unknown, not zero; convert with --wire (the proxy's calls.jsonl) to count them from the capture`,
  };
}

/**
 * The spawning call in the parent, by evidence: the spawn_agent output names the child — its thread id
 * (`agent_id`, v1) or its agent path (`task_name`, v2, equal to the child's session_meta.agent_path).
 */
function spawnCallOf(parent: CodexThread | undefined, child: CodexThread): { callId: string; at: string } | undefined {
  if (!parent) return undefined;
  const childId = child.threadId;
  const path = typeof child.meta.agent_path === 'string' ? child.meta.agent_path : undefined;
  for (const r of parent.own) {
    const p = r.record.payload as Json | undefined;
    if (r.record.type !== 'response_item' || p?.type !== 'function_call_output' || typeof p.output !== 'string') continue;
    try {
      const out = JSON.parse(p.output) as Json;
      if (out.agent_id === childId || (path !== undefined && out.task_name === path)) return { callId: p.call_id, at: `${r.file}:${r.line}` };
    } catch {
      // not a spawn output
    }
  }
  for (const r of parent.own) {
    const item = r.record.type === 'event_msg' && r.record.payload?.type === 'item_completed' ? (r.record.payload.item as Json) : undefined;
    if (item?.type === 'CollabAgentToolCall' && item.tool === 'spawn_agent' && (item.receiver_thread_ids ?? []).includes(childId)) return { callId: item.id, at: `${r.file}:${r.line}` };
  }
  return undefined;
}

/** The parent's last SubAgentActivity completed / interrupted for this child (seeds/004: it outranks the child's own turns). */
function parentActivity(parent: CodexThread | undefined, childId: string): { status: 'completed' | 'failed'; at: string } | undefined {
  if (!parent) return undefined;
  for (const r of [...parent.own].reverse()) {
    const item = r.record.type === 'event_msg' && r.record.payload?.type === 'item_completed' ? (r.record.payload.item as Json) : undefined;
    if (item?.type !== 'SubAgentActivity' || item.agent_thread_id !== childId) continue;
    if (item.kind === 'completed') return { status: 'completed', at: `${r.file}:${r.line}#SubAgentActivity.completed` };
    if (item.kind === 'interrupted') return { status: 'failed', at: `${r.file}:${r.line}#SubAgentActivity.interrupted` };
  }
  return undefined;
}

/**
 * A thread's status, the last observed turn outcome (Codex writes no thread-terminal record; seeds/004): for a
 * child, its parent's last SubAgentActivity completed or interrupted; failing that, its own last task_complete
 * or turn_aborted; failing that, unknown.
 */
function threadStatus(t: CodexThread, parent: CodexThread | undefined): { status: ParticipantUsage['status']; source: string | null } {
  const activity = t.parentThreadId ? parentActivity(parent, t.threadId) : undefined;
  if (activity) return { status: activity.status, source: activity.at };
  const last = [...t.own].reverse().find((r) => r.record.type === 'event_msg' && (r.record.payload?.type === 'task_complete' || r.record.payload?.type === 'turn_aborted'));
  if (!last) return { status: 'unknown', source: null };
  return { status: last.record.payload.type === 'task_complete' ? 'completed' : 'failed', source: `${last.file}:${last.line}#${last.record.payload.type}` };
}

/** Participants of a Codex session tree: one per thread, the root and its children by parent_thread_id. */
export function codexParticipants(threads: readonly CodexThread[], wire?: readonly Call[]): ParticipantUsage[] {
  const byId = new Map(threads.map((t) => [t.threadId, t]));
  return threads.map((t): ParticipantUsage => {
    const counted = threadTokens(t, wire);
    const parent = t.parentThreadId ? byId.get(t.parentThreadId) : undefined;
    const spawn = t.parentThreadId ? spawnCallOf(parent, t) : undefined;
    const { status, source } = threadStatus(t, parent);
    return {
      participant: `thread:${t.threadId}`,
      role: t.parentThreadId ? 'child' : 'root',
      native_id: t.threadId,
      parent: t.parentThreadId ? `thread:${t.parentThreadId}` : null,
      spawn_tool_call_id: spawn?.callId ?? null,
      depth: t.parentThreadId ? Math.max(1, t.depth) : 0,
      tokens: counted.tokens,
      ...(counted.note ? { tokens_status: counted.status, tokens_note: counted.note } : {}),
      messages: counted.responses,
      message_ids: counted.responseIds,
      status,
      status_source: source,
      // Codex writes no thread-terminal record: a status is the last turn seen (seeds/004).
      status_meaning: 'last_observed_turn',
      ...(t.own.length < t.records.length ? { replayed_records_skipped: t.records.length - t.own.length } : {}),
      cost_usd: null,
      cost_note: 'unreported: Codex reports no cost (unknown, not zero)',
      // spawn_agent answers at once with the child's id or path; the child's result comes through wait_agent.
      spawn_result: t.parentThreadId ? 'acknowledgement' : null,
      reason: t.parentThreadId && !spawn ? (parent ? 'no spawn_agent output in the parent names this thread' : `parent thread ${t.parentThreadId} is not among the rollouts read`) : null,
    };
  });
}


/**
 * spawn_agent calls (in a thread's own records) that produced no participant: the child's rollout was not
 * among the files read (not_collected), or the spawn itself failed (its output says how).
 */
export function spawnsWithoutParticipant(threads: readonly CodexThread[]): SpawnWithoutParticipant[] {
  const ids = new Set(threads.map((t) => t.threadId));
  const paths = new Set(threads.map((t) => t.meta.agent_path).filter((p): p is string => typeof p === 'string'));
  const out: SpawnWithoutParticipant[] = [];
  for (const t of threads) {
    const spawnCalls = new Set(
      t.own.filter((r) => r.record.type === 'response_item' && r.record.payload?.type === 'function_call' && r.record.payload.name === 'spawn_agent').map((r) => r.record.payload.call_id as string),
    );
    for (const r of t.own) {
      const p = r.record.payload as Json | undefined;
      if (r.record.type !== 'response_item' || p?.type !== 'function_call_output' || !spawnCalls.has(p.call_id)) continue;
      const text = typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null);
      let parsed: Json | undefined;
      try {
        parsed = JSON.parse(text) as Json;
      } catch {
        parsed = undefined;
      }
      const target = typeof parsed?.agent_id === 'string' ? parsed.agent_id : typeof parsed?.task_name === 'string' ? parsed.task_name : null;
      const source = `${r.file}:${r.line}`;
      if (target === null) out.push({ participant: `thread:${t.threadId}`, tool_call_id: p.call_id, target, status: 'failed', reason: `the spawn returned no agent: ${text.slice(0, 200)}`, source });
      else if (!ids.has(target) && !paths.has(target)) out.push({ participant: `thread:${t.threadId}`, tool_call_id: p.call_id, target, status: 'not_collected', reason: 'the child rollout was not among the files read', source });
    }
  }
  return out;
}

/**
 * Children a spawn names (its thread id or agent path) whose rollout is not among the files read: participants
 * with status missing and the spawn output that names them — in the tree, their tokens unknown (not zero).
 */
export function missingChildren(threads: readonly CodexThread[], participants: readonly ParticipantUsage[]): ParticipantUsage[] {
  return spawnsWithoutParticipant(threads)
    .filter((s) => s.status === 'not_collected')
    .map((s): ParticipantUsage => {
      const parentDepth = participants.find((p) => p.participant === s.participant)?.depth ?? 0;
      return {
        participant: `thread:${s.target}`,
        role: 'child',
        native_id: s.target!,
        parent: s.participant,
        spawn_tool_call_id: s.tool_call_id,
        depth: parentDepth + 1,
        tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 },
        messages: 0,
        message_ids: [],
        status: 'missing',
        status_source: s.source,
        cost_usd: null,
        cost_note: 'unreported: Codex reports no cost (unknown, not zero)',
        spawn_result: 'acknowledgement',
        reason: `${s.source} spawned ${s.target}, but its rollout is not among the files read: its tokens are unknown`,
      };
    });
}
