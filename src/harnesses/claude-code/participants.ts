import type { NativeRecord, NativeSession } from './native-session.js';
import { addTokens, zeroTokens, type ParticipantUsage, type TokensByKind } from '../../schemas/participant-usage.js';
import type { Resumption } from '../../schemas/manifest.js';

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

/** What the capture saw of each response (its usage as the server sent it), by response id. */
export type WireUsage = ReadonlyMap<string, TokensByKind>;

export interface ParticipantTokens {
  tokens: TokensByKind;
  messageIds: string[];
  /** exact, unless some message's output count is only the stream's start snapshot and the capture has not got it. */
  status: 'exact' | 'unknown';
  note: string | null;
}

/**
 * Token accounting of one participant (seeds/004): each assistant message once — Claude Code writes one
 * record per content block, each repeating the message's usage — keyed by message.id + requestId; the last
 * record of a message wins. Input excludes cache reads and writes, which are counted apart.
 * Some releases (2.1.20 to 2.1.50 in the matrix) write every record of a message before the stream ends: no
 * stop_reason, and an output count that is only the stream's start snapshot. Such a message's output is not
 * counted from the file: its usage comes from the capture (the response of the same id) when one is given,
 * else the participant's tokens are unknown, never the snapshot.
 */
export function tokensOf(records: NativeRecord[], wire?: WireUsage): ParticipantTokens {
  const byMessage = new Map<string, { usage: Json; final: boolean; id: string }>();
  for (const { record } of records) {
    if (record.type !== 'assistant' || record.message?.usage == null) continue;
    const key = `${record.message.id}\u0000${record.requestId ?? ''}`;
    const final = (byMessage.get(key)?.final ?? false) || record.message.stop_reason != null;
    byMessage.set(key, { usage: record.message.usage, final, id: record.message.id });
  }
  const tokens = zeroTokens();
  const fromWire: string[] = [];
  const unknown: string[] = [];
  for (const m of byMessage.values()) {
    const sent = m.final ? undefined : wire?.get(m.id);
    if (sent) {
      fromWire.push(m.id);
      addTokens(tokens, sent);
      continue;
    }
    if (!m.final) unknown.push(m.id);
    addTokens(tokens, usageTokens([m.usage]));
  }
  const notes = [
    ...(fromWire.length > 0 ? [`${fromWire.length} message(s) counted from the capture: their records hold only the stream's start snapshot (no stop_reason)`] : []),
    ...(unknown.length > 0 ? [`${unknown.length} message(s) whose records hold only the stream's start snapshot (no stop_reason): their output tokens are unknown, not zero (${unknown.join(', ')}); convert with --wire to count them from the capture`] : []),
  ];
  return { tokens, messageIds: [...new Set([...byMessage.values()].map((m) => m.id))], status: unknown.length > 0 ? 'unknown' : 'exact', note: notes.length > 0 ? notes.join('; ') : null };
}

/** A participant's token fields: tokens_status and tokens_note only where not everything is the file's final count. */
function tokenFields(t: ParticipantTokens): Pick<ParticipantUsage, 'tokens' | 'messages' | 'message_ids' | 'tokens_status' | 'tokens_note'> {
  return { tokens: t.tokens, messages: t.messageIds.length, message_ids: t.messageIds, ...(t.note ? { tokens_status: t.status, tokens_note: t.note } : {}) };
}

/**
 * The sidechains of an older main file (before 2.0.30): with an agentId, grouped by it; without one, each chain of
 * records (uuid / parentUuid, from a record whose parentUuid is null) is one sub-agent.
 */
function inlineSidechains(records: readonly NativeRecord[]): { key: string; byAgentId: boolean; records: NativeRecord[] }[] {
  const side = records.filter((r) => r.record.isSidechain === true);
  const rootOf = new Map<string, string>();
  const groups = new Map<string, { key: string; byAgentId: boolean; records: NativeRecord[] }>();
  for (const r of side) {
    const uuid = typeof r.record.uuid === 'string' ? r.record.uuid : null;
    let key: string;
    let byAgentId = false;
    if (typeof r.record.agentId === 'string') {
      key = r.record.agentId;
      byAgentId = true;
    } else {
      const parent = typeof r.record.parentUuid === 'string' ? r.record.parentUuid : null;
      key = (parent !== null ? rootOf.get(parent) : undefined) ?? uuid ?? `${r.file}:${r.line}`;
    }
    if (uuid) rootOf.set(uuid, key);
    const g = groups.get(key) ?? { key, byAgentId, records: [] };
    g.records.push(r);
    groups.set(key, g);
  }
  return [...groups.values()].filter((g) => g.records.some((r) => r.record.type === 'assistant'));
}

/** Where a tool_use with this id was made: the participant, the evidence (file:line) and the launching record's uuid. */
function findToolUse(files: { participant: string; records: NativeRecord[] }[], toolUseId: string): { participant: string; at: string; uuid: string | null } | undefined {
  for (const f of files) {
    for (const r of f.records) {
      if (r.record.type !== 'assistant') continue;
      if ((r.record.message.content as Json[]).some((b) => b.type === 'tool_use' && b.id === toolUseId)) return { participant: f.participant, at: `${r.file}:${r.line}`, uuid: typeof r.record.uuid === 'string' ? r.record.uuid : null };
    }
  }
  return undefined;
}

/**
 * A nested return without toolUseResult (seeds/000 A9.3): meta.json's `finished` counts only when the metadata,
 * the launch and the return agree — meta.toolUseId is the spawn found in the parent's file, meta.parentAgentId
 * names that parent, the parent's tool_result for it points back at the launching record
 * (sourceToolAssistantUUID), and every record of the child's file is the child's own agentId. The first
 * disagreement, or null when all agree.
 */
function nestedReturnMismatch(sub: NativeSession['subagents'][number], spawn: { participant: string; uuid: string | null }, parentRecords: readonly NativeRecord[], toolUseId: string): string | null {
  const parentAgent = typeof sub.meta?.parentAgentId === 'string' ? `agent:${sub.meta.parentAgentId}` : null;
  if (parentAgent !== null && parentAgent !== spawn.participant) return `${sub.metaFile} names parent ${parentAgent}, but tool call ${toolUseId} was made by ${spawn.participant}`;
  const back = parentRecords.find((r) => r.record.type === 'user' && Array.isArray(r.record.message?.content) && (r.record.message.content as Json[]).some((b) => b.type === 'tool_result' && b.tool_use_id === toolUseId));
  if (!back) return `no tool_result for ${toolUseId} in ${spawn.participant}'s file: the child's return is not on record`;
  if (spawn.uuid === null || back.record.sourceToolAssistantUUID !== spawn.uuid) return `${back.file}:${back.line} returns ${toolUseId}, but its sourceToolAssistantUUID (${String(back.record.sourceToolAssistantUUID)}) is not the launching record ${spawn.uuid}`;
  const stranger = sub.records.find((r) => typeof r.record.agentId === 'string' && r.record.agentId !== sub.agentId);
  if (stranger) return `${stranger.file}:${stranger.line} belongs to agent ${String(stranger.record.agentId)}, not ${sub.agentId}`;
  return null;
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

const textOf = (content: unknown): string => (typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n') : '');

/** The task-notification (a user record) naming both the agent and this delegation's tool id: how that delegation ended. */
function taskNotification(records: readonly NativeRecord[], agentId: string, toolUseId: string): { status: ParticipantUsage['status']; at: string } | undefined {
  for (const r of records) {
    if (r.record.type !== 'user') continue;
    const t = textOf(r.record.message?.content);
    if (!t.includes('<task-notification>') || !t.includes(`<task-id>${agentId}</task-id>`) || !t.includes(`<tool-use-id>${toolUseId}</tool-use-id>`)) continue;
    const s = /<status>([a-z_]+)<\/status>/.exec(t)?.[1];
    return { status: s === 'completed' ? 'completed' : s === 'failed' ? 'failed' : 'unknown', at: `${r.file}:${r.line}#task-notification.status` };
  }
  return undefined;
}

/**
 * Later delegations that resumed a sub-agent (seeds/000 A9.4; 2.1.3xx: SendMessage to a finished agent, whose
 * result names it as resumedAgentId and which runs in the background): each is judged by the task-notification
 * carrying its own tool id, never by the spawn's completion. Launched with no such notification: running.
 */
function resumptionsOf(files: readonly { participant: string; records: NativeRecord[] }[], agentId: string): Resumption[] {
  const out: Resumption[] = [];
  for (const f of files) {
    for (const r of f.records) {
      const result = r.record.type === 'user' ? r.record.toolUseResult : undefined;
      if (!result || result.success !== true || result.resumedAgentId !== agentId || !Array.isArray(r.record.message?.content)) continue;
      const tool = (r.record.message.content as Json[]).find((b) => b.type === 'tool_result')?.tool_use_id;
      if (typeof tool !== 'string') continue;
      const ended = taskNotification(f.records, agentId, tool);
      out.push({ tool_call_id: tool, parent_participant_id: f.participant, status: ended?.status ?? 'running', status_source: ended?.at ?? `${r.file}:${r.line}#toolUseResult.resumedAgentId` });
    }
  }
  return out;
}

/** Participants of a session with their own usage: the main thread, and one per sub-agent (file or inline chain). */
export function participantUsage(session: NativeSession, wire?: WireUsage): ParticipantUsage[] {
  const rootId = `session:${session.sessionId}`;
  const files = [{ participant: rootId, records: session.main }, ...session.subagents.map((s) => ({ participant: `agent:${s.agentId}`, records: s.records }))];
  // Older Claude Code wrote sub-agent turns inline (isSidechain: true) in the main file: they are not the
  // main participant's usage (seeds/004), so they go to participants of their own.
  const own = session.main.filter((r) => r.record.isSidechain !== true);
  const lastAssistant = [...own].reverse().find((r) => r.record.type === 'assistant');
  const costState = [...session.main].reverse().find((r) => r.record.type === 'cost-state');
  const rows: ParticipantUsage[] = [
    {
      participant: rootId,
      role: 'root',
      native_id: session.sessionId,
      parent: null,
      spawn_tool_call_id: null,
      depth: 0,
      ...tokenFields(tokensOf(own, wire)),
      status: lastAssistant?.record.message.stop_reason === 'end_turn' ? 'completed' : 'unknown',
      status_source: lastAssistant ? `${lastAssistant.file}:${lastAssistant.line}#message.stop_reason` : null,
      // Claude Code reports one cost for the whole session (sub-agents included): it stays on the root.
      cost_usd: typeof costState?.record.totalCostUSD === 'number' ? costState.record.totalCostUSD : null,
      cost_note: costState ? `${costState.file}:${costState.line}#totalCostUSD (includes sub-agents)` : 'no cost-state record',
      reason: null,
    },
  ];
  for (const chain of inlineSidechains(session.main)) {
    const first = chain.records[0]!;
    rows.push({
      participant: chain.byAgentId ? `agent:${chain.key}` : `sidechain:${chain.key}`,
      role: 'child',
      native_id: chain.key,
      // Inside the main file, and only the main thread could spawn in these releases: its parent is the root.
      // Which of the root's calls spawned it is not on these lines (left null, never guessed from text or order).
      parent: rootId,
      spawn_tool_call_id: null,
      depth: 1,
      ...tokenFields(tokensOf(chain.records, wire)),
      status: 'unknown',
      status_source: null,
      cost_usd: null,
      cost_note: 'included in the root participant (Claude Code reports one total)',
      reason: `inline sidechain from ${first.file}:${first.line} (Claude Code before 2.0.30): its records name no spawning tool call${chain.byAgentId ? '' : ' and no agent id (one chain of records is one sub-agent)'}`,
    });
  }
  for (const sub of session.subagents) {
    // meta.json (2.1.3xx) names the spawning call; older versions only say it in the parent's tool_result.
    const toolUseId = typeof sub.meta?.toolUseId === 'string' ? sub.meta.toolUseId : (spawnIdFromResult(files, sub.agentId) ?? null);
    const spawn = toolUseId ? findToolUse(files, toolUseId) : undefined;
    const result = toolUseId && spawn ? findSpawnResult(files.find((f) => f.participant === spawn.participant)!.records, toolUseId) : undefined;
    const counted = tokensOf(sub.records, wire);
    let status: ParticipantUsage['status'] = 'unknown';
    let source: string | null = null;
    const acknowledged = result?.status === 'async_launched' || sub.meta?.requestShape === 'background';
    if (result) {
      status = result.status === 'completed' ? 'completed' : result.status === 'failed' ? 'failed' : result.status === 'async_launched' ? 'running' : 'unknown';
      source = result.at;
    }
    let crossCheck: string | null = null;
    if (status !== 'completed' && sub.meta?.finished === true) {
      // No toolUseResult said how it ended: meta.json's word, once the launch and the return agree with it.
      crossCheck = spawn && toolUseId ? nestedReturnMismatch(sub, spawn, files.find((f) => f.participant === spawn.participant)!.records, toolUseId) : 'the spawning tool call is not on record';
      if (crossCheck === null) {
        status = 'completed';
        source = `${sub.metaFile}#finished`;
      }
    }
    // Resumed later: its status is the last delegation's, the spawn's own kept apart.
    const resumed = resumptionsOf(files, sub.agentId);
    const last = resumed.at(-1);
    const parentDepth = spawn ? (rows.find((r) => r.participant === spawn.participant)?.depth ?? 0) : -1;
    // A file without a single model message: the sub-agent ran (its parent names it) but its counts were never written.
    const unwritten = counted.messageIds.length === 0 && spawn !== undefined;
    rows.push({
      participant: `agent:${sub.agentId}`,
      role: 'child',
      native_id: sub.agentId,
      parent: spawn?.participant ?? null,
      spawn_tool_call_id: toolUseId,
      depth: typeof sub.meta?.spawnDepth === 'number' ? sub.meta.spawnDepth : spawn && parentDepth >= 0 ? parentDepth + 1 : -1,
      ...tokenFields(unwritten ? { ...counted, status: 'unknown', note: `${sub.file} holds no model message: its tokens were never written (unknown, not zero)` } : counted),
      status: last?.status ?? status,
      status_source: last ? last.status_source : source,
      cost_usd: null,
      cost_note: 'included in the root participant (Claude Code reports one total)',
      spawn_result: toolUseId ? (acknowledged ? 'acknowledgement' : 'result') : null,
      ...(last ? { resumed_by: resumed, spawn_status: { status, status_source: source } } : {}),
      reason: crossCheck
        ? `${sub.metaFile} says finished, but ${crossCheck}: status unknown`
        : spawn
        ? null
        : toolUseId
          ? `no tool_use with id ${toolUseId} in any file of the session`
          : `no meta.json toolUseId and no tool_result naming agent ${sub.agentId}: no tool call spawned it on record (a call the CLI made itself, such as its start-up warm-up, or a spawn not recorded)`,
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
