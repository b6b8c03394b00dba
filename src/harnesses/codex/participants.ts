import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';
import type { CodexThread } from './rollout.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/**
 * A thread's own tokens: one token_usage_record per HTTP response (deduplicated by response_id), from the
 * thread's own records only (a v2 fork's replayed parent prefix is the parent's). OpenAI counts cached input
 * inside input_tokens; here input excludes it, as for every harness.
 */
export function threadTokens(thread: CodexThread): { tokens: TokensByKind; responseIds: string[] } {
  const byResponse = new Map<string, Json>();
  for (const { record } of thread.own) if (record.type === 'token_usage_record') byResponse.set(record.payload.response_id, record.payload.usage ?? {});
  const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
  for (const u of byResponse.values()) {
    tokens.input += Math.max(0, n(u.input_tokens) - n(u.cached_input_tokens));
    tokens.cache_read += n(u.cached_input_tokens);
    tokens.cache_creation += n(u.cache_write_input_tokens);
    tokens.output += n(u.output_tokens);
    tokens.reasoning += n(u.reasoning_output_tokens);
  }
  return { tokens, responseIds: [...byResponse.keys()] };
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

/** Participants of a Codex session tree: one per thread, the root and its children by parent_thread_id. */
export function codexParticipants(threads: readonly CodexThread[]): ParticipantUsage[] {
  const byId = new Map(threads.map((t) => [t.threadId, t]));
  return threads.map((t): ParticipantUsage => {
    const { tokens, responseIds } = threadTokens(t);
    const complete = [...t.own].reverse().find((r) => r.record.type === 'event_msg' && (r.record.payload?.type === 'task_complete' || r.record.payload?.type === 'turn_aborted'));
    const spawn = t.parentThreadId ? spawnCallOf(byId.get(t.parentThreadId), t) : undefined;
    return {
      participant: `thread:${t.threadId}`,
      role: t.parentThreadId ? 'child' : 'root',
      native_id: t.threadId,
      parent: t.parentThreadId ? `thread:${t.parentThreadId}` : null,
      spawn_tool_call_id: spawn?.callId ?? null,
      depth: t.parentThreadId ? Math.max(1, t.depth) : 0,
      tokens,
      messages: responseIds.length,
      message_ids: responseIds,
      status: complete?.record.payload?.type === 'task_complete' ? 'completed' : complete ? 'failed' : 'unknown',
      status_source: complete ? `${complete.file}:${complete.line}#${complete.record.payload.type}` : null,
      cost_usd: null,
      cost_note: 'unreported: Codex reports no cost (unknown, not zero)',
      // spawn_agent answers at once with the child's id or path; the child's result comes through wait_agent.
      spawn_result: t.parentThreadId ? 'acknowledgement' : null,
      reason: t.parentThreadId && !spawn ? (byId.has(t.parentThreadId) ? 'no spawn_agent output in the parent names this thread' : `parent thread ${t.parentThreadId} is not among the rollouts read`) : null,
    };
  });
}

export interface SpawnWithoutParticipant {
  participant: string;
  tool_call_id: string;
  /** What the spawn output named: a thread id (v1) or an agent path (v2), when it named one. */
  target: string | null;
  status: 'not_collected' | 'failed';
  reason: string;
  source: string;
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
