import type { NativeRecord, NativeSession } from './native-session.js';
import { zeroTokens, type ParticipantUsage, type TokensByKind } from '../../schemas/participant-usage.js';

type Json = Record<string, any>;

export { addTokens, zeroTokens, type ParticipantUsage, type TokensByKind } from '../../schemas/participant-usage.js';

const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/**
 * The tokens of Anthropic usage objects, one per message (the caller keeps one per message.id + requestId):
 * input excludes cache reads and writes, which are counted apart; a malformed count is 0, never NaN.
 */
export function usageTokens(usages: Iterable<Json>): TokensByKind {
  const tokens = zeroTokens();
  for (const u of usages) {
    tokens.input += n(u.input_tokens);
    tokens.cache_creation += n(u.cache_creation_input_tokens);
    tokens.cache_read += n(u.cache_read_input_tokens);
    tokens.output += n(u.output_tokens);
    tokens.reasoning += n(u.output_tokens_details?.thinking_tokens ?? u.output_tokens_details?.reasoning_tokens);
  }
  return tokens;
}

/**
 * Token accounting of one participant (seeds/004): each assistant message once — Claude Code writes one
 * record per content block, each repeating the message's final usage — keyed by message.id + requestId;
 * the last record of a message wins. Input excludes cache reads and writes, which are counted apart.
 */
export function tokensOf(records: NativeRecord[]): { tokens: TokensByKind; messageIds: string[] } {
  const byMessage = new Map<string, Json>();
  for (const { record } of records) {
    if (record.type !== 'assistant' || record.message?.usage == null) continue;
    byMessage.set(`${record.message.id}\u0000${record.requestId ?? ''}`, record.message.usage);
  }
  const tokens = usageTokens(byMessage.values());
  return { tokens, messageIds: [...new Set([...byMessage.keys()].map((k) => k.split('\u0000')[0]!))] };
}

/** Where a tool_use with this id was made: the participant and the evidence (file:line). */
function findToolUse(files: { participant: string; records: NativeRecord[] }[], toolUseId: string): { participant: string; at: string } | undefined {
  for (const f of files) {
    for (const r of f.records) {
      if (r.record.type !== 'assistant') continue;
      if ((r.record.message.content as Json[]).some((b) => b.type === 'tool_use' && b.id === toolUseId)) return { participant: f.participant, at: `${r.file}:${r.line}` };
    }
  }
  return undefined;
}

/** The parent's tool_result for a spawn: it says how the child ended (foreground runs). */
function findSpawnResult(records: NativeRecord[], toolUseId: string): { status: string; at: string } | undefined {
  for (const r of records) {
    if (r.record.type !== 'user' || !Array.isArray(r.record.message.content)) continue;
    if (!(r.record.message.content as Json[]).some((b) => b.type === 'tool_result' && b.tool_use_id === toolUseId)) continue;
    const s = r.record.toolUseResult?.status;
    if (typeof s === 'string') return { status: s, at: `${r.file}:${r.line}#toolUseResult.status` };
  }
  return undefined;
}

/** The spawning tool_use id from the parent's tool_result (toolUseResult.agentId), for files without meta.json. */
function spawnIdFromResult(files: { records: NativeRecord[] }[], agentId: string): string | undefined {
  for (const f of files) {
    for (const r of f.records) {
      if (r.record.type !== 'user' || r.record.toolUseResult?.agentId !== agentId || !Array.isArray(r.record.message.content)) continue;
      const result = (r.record.message.content as Json[]).find((b) => b.type === 'tool_result');
      if (typeof result?.tool_use_id === 'string') return result.tool_use_id;
    }
  }
  return undefined;
}

/** Participants of a session with their own usage: the main thread, and one per sub-agent file. */
export function participantUsage(session: NativeSession): ParticipantUsage[] {
  const rootId = `session:${session.sessionId}`;
  const files = [{ participant: rootId, records: session.main }, ...session.subagents.map((s) => ({ participant: `agent:${s.agentId}`, records: s.records }))];
  // Older Claude Code wrote sub-agent turns inline (isSidechain: true) in the main file: they are not the
  // main participant's usage (seeds/004), so they go to participants of their own.
  const own = session.main.filter((r) => r.record.isSidechain !== true);
  const inline = session.main.filter((r) => r.record.isSidechain === true && r.record.type === 'assistant'); // usage lives on assistant records
  const lastAssistant = [...own].reverse().find((r) => r.record.type === 'assistant');
  const costState = [...session.main].reverse().find((r) => r.record.type === 'cost-state');
  const main = tokensOf(own);
  const rows: ParticipantUsage[] = [
    {
      participant: rootId,
      role: 'root',
      native_id: session.sessionId,
      parent: null,
      spawn_tool_call_id: null,
      depth: 0,
      tokens: main.tokens,
      messages: main.messageIds.length,
      message_ids: main.messageIds,
      status: lastAssistant?.record.message.stop_reason === 'end_turn' ? 'completed' : 'unknown',
      status_source: lastAssistant ? `${lastAssistant.file}:${lastAssistant.line}#message.stop_reason` : null,
      // Claude Code reports one cost for the whole session (sub-agents included): it stays on the root.
      cost_usd: typeof costState?.record.totalCostUSD === 'number' ? costState.record.totalCostUSD : null,
      cost_note: costState ? `${costState.file}:${costState.line}#totalCostUSD (includes sub-agents)` : 'no cost-state record',
      reason: null,
    },
  ];
  const inlineGroups = new Map<string, NativeRecord[]>();
  for (const r of inline) {
    const key = typeof r.record.agentId === 'string' ? r.record.agentId : '';
    inlineGroups.set(key, [...(inlineGroups.get(key) ?? []), r]);
  }
  for (const [agentId, records] of inlineGroups) {
    const t = tokensOf(records);
    rows.push({
      participant: agentId ? `agent:${agentId}` : 'sidechain:inline',
      role: 'child',
      native_id: agentId || 'inline-sidechain',
      parent: rootId,
      spawn_tool_call_id: null,
      depth: 1,
      tokens: t.tokens,
      messages: t.messageIds.length,
      message_ids: t.messageIds,
      status: 'unknown',
      status_source: null,
      cost_usd: null,
      cost_note: 'included in the root participant (Claude Code reports one total)',
      reason: agentId
        ? 'inline sidechain (older layout): the spawning tool call is not recorded on these lines'
        : 'inline sidechain without agentId (older layout): its sub-agents cannot be told apart, so they are one participant',
    });
  }
  for (const sub of session.subagents) {
    // meta.json (2.1.3xx) names the spawning call; older versions only say it in the parent's tool_result.
    const toolUseId = typeof sub.meta?.toolUseId === 'string' ? sub.meta.toolUseId : (spawnIdFromResult(files, sub.agentId) ?? null);
    const spawn = toolUseId ? findToolUse(files, toolUseId) : undefined;
    const result = toolUseId && spawn ? findSpawnResult(files.find((f) => f.participant === spawn.participant)!.records, toolUseId) : undefined;
    const own = tokensOf(sub.records);
    let status: ParticipantUsage['status'] = 'unknown';
    let source: string | null = null;
    const acknowledged = result?.status === 'async_launched' || sub.meta?.requestShape === 'background';
    if (result) {
      status = result.status === 'completed' ? 'completed' : result.status === 'failed' ? 'failed' : result.status === 'async_launched' ? 'running' : 'unknown';
      source = result.at;
    }
    if (status !== 'completed' && sub.meta?.finished === true) {
      status = 'completed';
      source = `${sub.metaFile}#finished`;
    }
    rows.push({
      participant: `agent:${sub.agentId}`,
      role: 'child',
      native_id: sub.agentId,
      parent: spawn?.participant ?? null,
      spawn_tool_call_id: toolUseId,
      depth: typeof sub.meta?.spawnDepth === 'number' ? sub.meta.spawnDepth : spawn ? 1 : 0,
      tokens: own.tokens,
      messages: own.messageIds.length,
      message_ids: own.messageIds,
      status,
      status_source: source,
      cost_usd: null,
      cost_note: 'included in the root participant (Claude Code reports one total)',
      spawn_result: toolUseId ? (acknowledged ? 'acknowledgement' : 'result') : null,
      reason: spawn
        ? null
        : toolUseId
          ? `no tool_use with id ${toolUseId} in any file of the session`
          : 'no meta.json toolUseId and no tool_result naming this agentId: the spawning call is unknown',
    });
  }
  rows.push(...missingSubagents(session, files, rows));
  return rows;
}

/**
 * Sub-agents a parent's tool_result names (toolUseResult.agentId) whose file is not in the session's subagents/:
 * listed with status missing and the record that names them, never left out of the tree and its totals.
 */
function missingSubagents(session: NativeSession, files: { participant: string; records: NativeRecord[] }[], rows: readonly ParticipantUsage[]): ParticipantUsage[] {
  const present = new Set(rows.map((r) => r.native_id));
  const out: ParticipantUsage[] = [];
  for (const f of files) {
    for (const r of f.records) {
      const agentId = r.record.type === 'user' ? r.record.toolUseResult?.agentId : undefined;
      if (typeof agentId !== 'string' || present.has(agentId)) continue;
      present.add(agentId);
      const result = Array.isArray(r.record.message.content) ? (r.record.message.content as Json[]).find((b) => b.type === 'tool_result') : undefined;
      const parentDepth = rows.find((x) => x.participant === f.participant)?.depth ?? 0;
      out.push({
        participant: `agent:${agentId}`,
        role: 'child',
        native_id: agentId,
        parent: f.participant,
        spawn_tool_call_id: typeof result?.tool_use_id === 'string' ? result.tool_use_id : null,
        depth: parentDepth >= 0 ? parentDepth + 1 : -1,
        tokens: zeroTokens(),
        messages: 0,
        message_ids: [],
        status: 'missing',
        status_source: `${r.file}:${r.line}#toolUseResult.agentId`,
        cost_usd: null,
        cost_note: 'included in the root participant (Claude Code reports one total)',
        spawn_result: null,
        reason: `${r.file}:${r.line} names sub-agent ${agentId}, but ${session.sessionId}/subagents/agent-${agentId}.jsonl is not there: its tokens are unknown`,
      });
    }
  }
  return out;
}
