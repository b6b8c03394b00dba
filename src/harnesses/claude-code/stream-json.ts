import { createStageContext } from '../../core/context.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import type { Rejected } from '../../core/rejected.js';
import type { ParticipantUsage } from './participants.js';

type Json = Record<string, any>;

/**
 * `claude -p --output-format stream-json --verbose` stdout, the second source (the one the peer Agent
 * Journal works from): task_started links agentId to the spawning tool_use; forwarded sub-agent events
 * carry parent_tool_use_id and agent_id; the result carries the main thread's usage and the session's
 * modelUsage totals.
 */
export interface StreamSummary {
  sessionIds: string[];
  tasks: { agentId: string; toolUseId: string | null; subagentType: string | null; backgrounded: boolean | null }[];
  /** Assistant message ids by agent ('' = the main thread). Without --forward-subagent-text some are absent. */
  messages: Map<string, Set<string>>;
  /** One per query: -p with a background agent emits a second result after the task-notification turn. */
  results: { subtype: string | null; usage: Json | null; modelUsage: Json | null; totalCostUsd: number | null }[];
  rejects: Rejected[];
}

export async function readStreamJson(path: string): Promise<StreamSummary> {
  const rejects: Rejected[] = [];
  const summary: StreamSummary = { sessionIds: [], tasks: [], messages: new Map(), results: [], rejects };
  const ctx = createStageContext({ onReject: (r) => rejects.push(r) });
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject' })(ctx)) {
    const e = env.data as Json;
    if (typeof e.session_id === 'string' && !summary.sessionIds.includes(e.session_id)) summary.sessionIds.push(e.session_id);
    if (e.type === 'system' && e.subtype === 'task_started' && typeof e.task_id === 'string') {
      summary.tasks.push({
        agentId: e.task_id,
        toolUseId: typeof e.tool_use_id === 'string' ? e.tool_use_id : null,
        subagentType: typeof e.subagent_type === 'string' ? e.subagent_type : null,
        backgrounded: typeof e.is_backgrounded === 'boolean' ? e.is_backgrounded : null,
      });
    } else if (e.type === 'assistant' && typeof e.message?.id === 'string') {
      const agent = typeof e.agent_id === 'string' ? e.agent_id : '';
      if (!summary.messages.has(agent)) summary.messages.set(agent, new Set());
      summary.messages.get(agent)!.add(e.message.id);
    } else if (e.type === 'result') {
      summary.results.push({
        subtype: typeof e.subtype === 'string' ? e.subtype : null,
        usage: e.usage ?? null,
        modelUsage: e.modelUsage ?? null,
        totalCostUsd: typeof e.total_cost_usd === 'number' ? e.total_cost_usd : null,
      });
    }
  }
  return summary;
}

/** Where the stream and the native files disagree (empty when they agree). Evidence only, never repaired. */
export function crossCheckStream(stream: StreamSummary, participants: readonly ParticipantUsage[]): string[] {
  const problems: string[] = [];
  const root = participants.find((p) => p.role === 'root');
  const byAgent = new Map(participants.filter((p) => p.role === 'child').map((p) => [p.native_id, p]));
  if (root && stream.sessionIds.length > 0 && !stream.sessionIds.includes(root.native_id)) {
    problems.push(`stream session ${stream.sessionIds.join(', ')} is not the native session ${root.native_id}`);
  }
  for (const t of stream.tasks) {
    const p = byAgent.get(t.agentId);
    if (!p) problems.push(`task_started ${t.agentId} has no native sub-agent file`);
    else if (t.toolUseId && p.spawn_tool_call_id !== t.toolUseId) problems.push(`task ${t.agentId}: stream tool_use ${t.toolUseId}, native ${p.spawn_tool_call_id}`);
  }
  for (const [agent, ids] of stream.messages) {
    const p = agent === '' ? root : byAgent.get(agent);
    if (!p) {
      problems.push(`stream messages of agent ${agent} have no native participant`);
      continue;
    }
    for (const id of ids) if (!p.message_ids.includes(id)) problems.push(`stream message ${id} (${agent || 'main'}) is not in the native ${p.participant}`);
  }
  // Each result's usage is its own query's main-thread usage: together they are the main participant's.
  const usages = stream.results.map((r) => r.usage).filter((u): u is Json => u !== null && typeof u === 'object');
  if (root && usages.length > 0) {
    const fields = { input: 'input_tokens', cache_creation: 'cache_creation_input_tokens', cache_read: 'cache_read_input_tokens', output: 'output_tokens' } as const;
    for (const [k, field] of Object.entries(fields)) {
      const v = usages.reduce((a, u) => a + (typeof u[field] === 'number' ? (u[field] as number) : 0), 0);
      const native = root.tokens[k as keyof typeof root.tokens];
      if (v !== native) problems.push(`result usage ${field} summed over ${usages.length} result(s) ${v} != native main ${native}`);
    }
  }
  // modelUsage is cumulative for the session: the last result holds the totals over all participants.
  const models = stream.results.at(-1)?.modelUsage;
  if (models && typeof models === 'object') {
    const total = (k: string) => Object.values(models as Record<string, Json>).reduce((a, m) => a + (typeof m[k] === 'number' ? m[k] : 0), 0);
    const sum = (k: keyof ParticipantUsage['tokens']) => participants.reduce((a, p) => a + p.tokens[k], 0);
    for (const [k, n] of [['inputTokens', 'input'], ['outputTokens', 'output'], ['cacheReadInputTokens', 'cache_read'], ['cacheCreationInputTokens', 'cache_creation']] as const) {
      if (total(k) !== sum(n)) problems.push(`result.modelUsage ${k} ${total(k)} != sum over participants ${sum(n)}`);
    }
  }
  return problems;
}
