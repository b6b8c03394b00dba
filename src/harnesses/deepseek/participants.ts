import type { ParticipantUsage, SpawnWithoutParticipant, TokensByKind } from '../../schemas/participant-usage.js';
import { descriptorOf, type DshEvent, type DshSession } from './session-log.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/**
 * The delegation tools behind each sub-agent provider (subagent/descriptor `provider`): dsh's headless profile has
 * `subagent` and `subagent_fork`; roller's verify profile adds a read-only `subagent_reader` (launch.ts).
 */
const TOOLS_OF_PROVIDER: Record<string, readonly string[]> = { spawn: ['subagent', 'subagent_reader'], fork: ['subagent_fork'] };
const DELEGATION_TOOLS = new Set(Object.values(TOOLS_OF_PROVIDER).flat());
const providerOf = (s: DshSession) => String(descriptorOf(s)?.provider ?? '');

/** A model reply dsh kept: one per completed model call (the title request writes none). */
export const isAssistantMessage = (e: DshEvent) => e.type === 'assistant/message' && e.data.message?.role === 'assistant';

export const participantOf = (id: string) => `session:${id}`;

/** A session's terminal state: its last turn's `turn/end` reason, or running when a turn started and never ended. */
function statusOf(s: DshSession): Pick<ParticipantUsage, 'status' | 'status_source'> {
  let lastStart: DshEvent | undefined;
  let lastEnd: DshEvent | undefined;
  for (const e of s.events) {
    if (e.type === 'turn/start') lastStart = e;
    else if (e.type === 'turn/end') lastEnd = e;
  }
  if (lastStart && (!lastEnd || lastEnd.seq < lastStart.seq)) {
    return { status: 'running', status_source: `${s.file}: turn ${String(lastStart.data.turn)} started (seq ${lastStart.seq}) and has no turn/end: the process ended while it ran` };
  }
  if (!lastEnd) return { status: 'unknown', status_source: `${s.file}: no turn ran` };
  const kind = String((lastEnd.data.reason as Json | undefined)?.kind ?? 'none');
  const status = kind === 'completed' ? 'completed' : kind === 'error' ? 'failed' : 'unknown';
  return { status, status_source: `${s.file}: turn/end seq ${lastEnd.seq} (${kind})` };
}

interface Spawn {
  callId: string;
  name: string;
  seq: number;
  /** The error text of a refused or failed call. */
  error: string | null;
  /** The child id the call's own result names (a background start: "started subagent <id>"). */
  startedChild: string | null;
  failed: boolean;
}

/** The delegation tool calls a session made, with what their results say. */
function spawnsOf(s: DshSession): Spawn[] {
  const calls = new Map<string, Spawn>();
  for (const e of s.events) {
    if (e.type === 'tool/call' && DELEGATION_TOOLS.has(String(e.data.name))) {
      calls.set(String(e.data.callId), { callId: String(e.data.callId), name: String(e.data.name), seq: e.seq, error: null, startedChild: null, failed: false });
    } else if (e.type === 'tool/result') {
      for (const block of (e.data.message?.content ?? []) as Json[]) {
        const spawn = calls.get(String(block.toolCallId));
        if (!spawn || block.type !== 'tool-result') continue;
        spawn.failed = block.isError === true;
        const text = ((block.content ?? []) as Json[]).map((c) => (typeof c.text === 'string' ? c.text : '')).join('');
        if (spawn.failed) spawn.error = text.slice(0, 300);
        spawn.startedChild = /^started subagent (\S+)$/.exec(text.trim())?.[1] ?? null;
      }
    }
  }
  return [...calls.values()];
}

interface SpawnLink {
  callId: string | null;
  result: 'result' | 'acknowledgement' | null;
  reason: string | null;
}

/**
 * Which tool call started each child, by evidence only. A background start names its child in its own result
 * (`started subagent <id>`). A foreground child's log names its parent (`parentSession`) but no call, and the
 * parent's result holds only the child's report: it is bound only when it is the one foreground child its parent
 * started with that tool and the parent made exactly one such call that did not fail; otherwise null, with why.
 */
function spawnLinks(sessions: readonly DshSession[]): Map<string, SpawnLink> {
  const links = new Map<string, SpawnLink>();
  for (const parent of sessions) {
    const children = sessions.filter((c) => c.header.parentSession === parent.header.id);
    if (children.length === 0) continue;
    const spawns = spawnsOf(parent);
    const byStart = new Map(spawns.filter((s) => s.startedChild).map((s) => [s.startedChild!, s]));
    for (const child of children) {
      const started = byStart.get(child.header.id);
      if (started) {
        links.set(child.header.id, { callId: started.callId, result: 'acknowledgement', reason: null });
        continue;
      }
      const provider = providerOf(child);
      const tools = TOOLS_OF_PROVIDER[provider];
      const tool = tools?.join(' or ');
      const calls = spawns.filter((s) => tools?.includes(s.name) && !s.startedChild && !s.failed);
      const siblings = children.filter((c) => !byStart.has(c.header.id) && providerOf(c) === provider);
      if (tool && calls.length === 1 && siblings.length === 1) links.set(child.header.id, { callId: calls[0]!.callId, result: 'result', reason: null });
      else {
        links.set(child.header.id, {
          callId: null,
          result: tool ? 'result' : null,
          reason: tool
            ? `its parent made ${calls.length} ${tool} calls and started ${siblings.length} foreground children with it: dsh keeps no id joining a foreground child to its call, so which call started it is not known`
            : `its log names no known sub-agent provider (subagent/descriptor provider '${provider}')`,
        });
      }
    }
  }
  return links;
}

/**
 * One participant per session of the tree: the root and each sub-agent session (its header's parentSession names
 * the parent, delegationDepth its depth). Tokens are the assistant messages' own usage — inputTokens is the prompt
 * less its cache hits, as the wire's prompt_tokens − cached_tokens; outputTokens includes reasoning.
 */
export function deepSeekParticipants(sessions: readonly DshSession[]): ParticipantUsage[] {
  const links = spawnLinks(sessions);
  const ids = new Set(sessions.map((s) => s.header.id));
  return sessions.map((s) => {
    const assistants = s.events.filter(isAssistantMessage);
    const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
    for (const a of assistants) {
      const u = (a.data.usage ?? {}) as Json;
      tokens.input += n(u.inputTokens);
      tokens.cache_read += n(u.cacheReadTokens);
      tokens.output += n(u.outputTokens);
      tokens.reasoning += n(u.reasoningTokens);
    }
    const parentId = s.header.parentSession ?? null;
    const link = links.get(s.header.id);
    const parentKnown = parentId !== null && ids.has(parentId);
    return {
      participant: participantOf(s.header.id),
      role: parentId === null ? 'root' : 'child',
      native_id: s.header.id,
      parent: parentKnown ? participantOf(parentId) : null,
      spawn_tool_call_id: link?.callId ?? null,
      depth: parentId === null ? 0 : parentKnown ? n(s.header.delegationDepth) : -1,
      tokens,
      messages: assistants.length,
      message_ids: assistants.map((a) => String(a.data.message.id)),
      ...statusOf(s),
      cost_usd: null,
      cost_note: 'dsh records no cost',
      reason: parentId !== null && !parentKnown ? `its parent session ${parentId} is not among the logs read` : (link?.reason ?? null),
      spawn_result: parentId === null ? null : (link?.result ?? null),
    };
  });
}

/**
 * Delegation calls that certainly made no session of the tree (seeds/004): a call dsh refused or that failed, a
 * background start whose named child has no log, and the foreground calls of a parent that has no foreground child
 * at all. (Where a parent has some children but fewer than its calls, which calls lack one is not known: the
 * children's reasons say so.)
 */
export function deepSeekSpawnsWithoutParticipant(sessions: readonly DshSession[]): SpawnWithoutParticipant[] {
  const ids = new Set(sessions.map((s) => s.header.id));
  const out: SpawnWithoutParticipant[] = [];
  for (const parent of sessions) {
    const foregroundChildren = sessions.filter((c) => c.header.parentSession === parent.header.id && descriptorOf(c)?.mode !== 'continuable');
    for (const s of spawnsOf(parent)) {
      const base = { participant: participantOf(parent.header.id), tool_call_id: s.callId, source: `${parent.file}: tool/call seq ${s.seq}` };
      if (s.failed) out.push({ ...base, target: null, status: 'failed', reason: `the ${s.name} call failed: ${s.error ?? 'no error text'}` });
      else if (s.startedChild && !ids.has(s.startedChild)) out.push({ ...base, target: s.startedChild, status: 'not_collected', reason: `its result names sub-agent ${s.startedChild}, whose session log is not among those read` });
      else if (!s.startedChild && foregroundChildren.length === 0) out.push({ ...base, target: null, status: 'not_collected', reason: `no session log names ${parent.header.id} as its parent` });
    }
  }
  return out;
}
