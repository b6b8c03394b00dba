import { randomBytes } from 'node:crypto';
import { RELATION_SCHEMA, type Relation } from '../../schemas/relation.js';
import type { Call } from '../../schemas/call.js';
import type { ParticipantUsage } from '../../harnesses/claude-code/participants.js';

type Json = Record<string, any>;

/** The tool-call ids whose results a request body carries, for each protocol's shape. */
export function toolResultIdsIn(call: Call): Set<string> {
  const ids = new Set<string>();
  const body = (call.context ?? {}) as Json;
  if (call.protocol === 'anthropic-messages') {
    for (const m of (body.messages ?? []) as Json[]) {
      if (Array.isArray(m.content)) for (const b of m.content as Json[]) if (b.type === 'tool_result' && typeof b.tool_use_id === 'string') ids.add(b.tool_use_id);
    }
  } else if (call.protocol === 'openai-responses') {
    for (const it of (Array.isArray(body.input) ? body.input : []) as Json[]) {
      if ((it.type === 'function_call_output' || it.type === 'custom_tool_call_output') && typeof it.call_id === 'string') ids.add(it.call_id);
    }
  } else if (call.protocol === 'openai-chat-completions') {
    for (const m of (body.messages ?? []) as Json[]) if (m.role === 'tool' && typeof m.tool_call_id === 'string') ids.add(m.tool_call_id);
  }
  return ids;
}

/**
 * Tool-call ids a harness rewrote between a model's output and the history it sends back (OpenClaw: the model's
 * `call_0001` returns as `call0001` on the wire, while its transcript keeps `call_0001`). Established from the
 * actual requests only: a later request's assistant message whose tool calls are, in order, the same names and
 * arguments as exactly one earlier call's output, and whose ids differ from that output's only by characters
 * other than letters and digits. Returns history id -> the id the model emitted (Chat Completions).
 */
export function rewrittenToolIds(calls: readonly Call[]): Map<string, string> {
  const aliases = new Map<string, string>();
  const chat = calls.filter((c) => c.protocol === 'openai-chat-completions').sort((a, b) => a.seq - b.seq);
  const emitted = chat.map((c) => ({ call: c, tools: outputToolCalls(c) })).filter((x) => x.tools.length > 0);
  if (emitted.length === 0) return aliases;
  const key = (t: { name: string; arguments: string }) => `${t.name}\u0000${t.arguments}`;
  for (const c of chat) {
    for (const m of (((c.context ?? {}) as Json).messages ?? []) as Json[]) {
      if (m.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
      const sent = (m.tool_calls as Json[]).map((t) => ({ id: String(t.id ?? ''), name: String(t.function?.name ?? ''), arguments: String(t.function?.arguments ?? '') }));
      if (sent.every((t) => aliases.has(t.id) || emitted.some((e) => e.tools.some((o) => o.id === t.id)))) continue; // nothing rewritten
      const sources = emitted.filter((e) => e.call.seq < c.seq && e.call.participant_id === c.participant_id && e.tools.length === sent.length && e.tools.every((o, i) => key(o) === key(sent[i]!)));
      if (sources.length !== 1) continue; // none, or ambiguous: no alias rather than a guess
      sources[0]!.tools.forEach((o, i) => {
        const h = sent[i]!.id;
        if (h !== o.id && h === o.id.replace(/[^A-Za-z0-9]/g, '')) aliases.set(h, o.id);
      });
    }
  }
  return aliases;
}

function outputToolCalls(call: Call): { id: string; name: string; arguments: string }[] {
  const message = (((call.output ?? {}) as Json).choices?.[0]?.message ?? {}) as Json;
  return ((message.tool_calls ?? []) as Json[]).map((t) => ({ id: String(t.id ?? ''), name: String(t.function?.name ?? ''), arguments: String(t.function?.arguments ?? '') }));
}

/**
 * Where an acknowledged child's result reaches the parent's actual input, by evidence that names the child:
 * a Claude Code <task-notification> holding both its task id and the spawn's tool-use id (the same text
 * without those ids is no proof), a Codex v1 wait_agent output whose status names the child's thread as
 * completed or a <subagent_notification> naming it (agent_path) as completed, or a Codex v2 FINAL_ANSWER
 * agent_message authored by the child's agent path, or an OpenClaw completion event (a user message from
 * `source: subagent` naming the child's `session_key`).
 */
export function deliveryIn(call: Call, child: { native_id: string; spawn_tool_call_id: string | null }, agentPath?: string): boolean {
  const body = (call.context ?? {}) as Json;
  const text = (c: unknown): string => (typeof c === 'string' ? c : Array.isArray(c) ? (c as Json[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n') : '');
  if (call.protocol === 'anthropic-messages') {
    const tool = child.spawn_tool_call_id;
    return ((body.messages ?? []) as Json[]).some((m) => {
      if (m.role !== 'user') return false;
      const t = text(m.content);
      return t.includes('<task-notification>') && t.includes(`<task-id>${child.native_id}</task-id>`) && tool !== null && t.includes(`<tool-use-id>${tool}</tool-use-id>`);
    });
  }
  if (call.protocol === 'openai-responses') {
    return ((Array.isArray(body.input) ? body.input : []) as Json[]).some((it) => {
      if (it.type === 'function_call_output' && typeof it.output === 'string') {
        try {
          const out = JSON.parse(it.output) as Json;
          return out.status?.[child.native_id]?.completed !== undefined;
        } catch {
          return false;
        }
      }
      if (it.type === 'agent_message') return agentPath !== undefined && it.author === agentPath && text(it.content).includes('FINAL_ANSWER');
      // v1: a child that finished after the wait is announced to the parent, naming its thread.
      if ((it.type === 'message' || it.role !== undefined) && it.role === 'user') {
        const t = text(it.content);
        return t.includes('<subagent_notification>') && t.includes(`"agent_path":"${child.native_id}"`) && t.includes('"completed"');
      }
      return false;
    });
  }
  if (call.protocol === 'openai-chat-completions') {
    return ((body.messages ?? []) as Json[]).some((m) => {
      if (m.role !== 'user') return false;
      const lines = text(m.content).split('\n');
      return lines.includes('source: subagent') && lines.includes(`session_key: ${child.native_id}`);
    });
  }
  return false;
}

/**
 * Does an output's tool ref match a native tool id? A composite native id `call_id|item_id` (OpenClaw's
 * Responses SDK) must match both the output's call_id and its item_id — one of the two is not enough
 * (seeds/000). A plain id matches the call id.
 */
export function refMatches(ref: { id: string; item_id?: string | undefined }, nativeId: string): boolean {
  const bar = nativeId.indexOf('|');
  if (bar === -1) return ref.id === nativeId;
  return ref.id === nativeId.slice(0, bar) && ref.item_id === nativeId.slice(bar + 1);
}

export interface RelationInput {
  calls: readonly Call[];
  participants: readonly ParticipantUsage[];
  /** Random scope of this capture attempt: relation ids never collide across samples or retries. */
  scope?: string;
  /** Codex v2: each child thread's agent path (session_meta.agent_path), the author of its answers. */
  agentPaths?: Readonly<Record<string, string>>;
}

/**
 * Relations with evidence (seeds/000): spawn and child_completed / child_failed from native evidence, the
 * parent call found by the spawn tool-call id in its output (else "unknown"), and one result_in_context per
 * later call of the parent whose actual input carries that tool-call id's result. A launch acknowledgement
 * (a background spawn's immediate result) is never completion.
 */
export function deriveRelations(input: RelationInput): Relation[] {
  const scope = input.scope ?? randomBytes(4).toString('hex');
  let n = 0;
  const id = () => `r-${scope}-${String(n++).padStart(6, '0')}`;
  const out: Relation[] = [];
  const byParticipant = (p: string) => input.calls.filter((c) => c.participant_id === p).sort((a, b) => a.seq - b.seq);
  const aliases = rewrittenToolIds(input.calls);
  for (const child of input.participants.filter((p) => p.role === 'child')) {
    const tool = child.spawn_tool_call_id;
    const parent = child.parent;
    const base = {
      schema: RELATION_SCHEMA,
      parent_participant_id: parent,
      child_participant_id: child.participant,
      tool_call_id: tool,
      model_tool_ref: null,
    } as const;
    if (!parent || !tool) {
      out.push({ ...base, relation_id: id(), type: 'spawn', parent_call_id: 'unknown', in_call_id: null, evidence: [{ source: child.status_source ?? 'native', event_id: child.native_id, retained: true }], status: 'unknown', reason: child.reason ?? 'the spawning call is not known' });
      continue;
    }
    const parentCalls = byParticipant(parent);
    const spawning = parentCalls.filter((c) => c.tool_refs.some((r) => refMatches(r, tool)));
    const parentCallId = spawning.length === 1 ? spawning[0]!.call_id : 'unknown';
    const refOf = (c: Call | undefined) => {
      const r = c?.tool_refs.find((t) => refMatches(t, tool));
      return r?.item_id ? { call_id: r.id, item_id: r.item_id } : null;
    };
    out.push({
      ...base,
      model_tool_ref: refOf(spawning[0]),
      relation_id: id(),
      type: 'spawn',
      parent_call_id: parentCallId,
      in_call_id: null,
      evidence: [{ source: child.status_source?.split('#')[0] ?? 'native', event_id: tool, retained: true }],
      status: parentCallId === 'unknown' ? 'unknown' : 'established',
      reason: parentCallId === 'unknown' ? `${spawning.length} parent calls carry tool call ${tool} in their output` : null,
    });
    if (child.status === 'completed' || child.status === 'failed') {
      out.push({
        ...base,
        relation_id: id(),
        type: child.status === 'completed' ? 'child_completed' : 'child_failed',
        parent_call_id: parentCallId,
        in_call_id: null,
        evidence: [{ source: child.status_source ?? 'native', event_id: child.native_id, retained: true }],
        status: 'established',
        reason: null,
      });
    }
    // Every later parent call whose actual input carries the result of the spawn call.
    const later = parentCalls.filter((c) => spawning.length === 0 || c.seq > spawning[0]!.seq);
    const carrying = later.filter((c) => [...toolResultIdsIn(c)].some((x) => (aliases.get(x) ?? x) === tool));
    if (child.spawn_result === 'acknowledgement') {
      // The spawn's immediate result was a launch acknowledgement, never completion: how the real result
      // reached the parent (a task-notification, a wait_agent output) is a separate relation.
      out.push({ ...base, relation_id: id(), type: 'launch_acknowledged', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: child.status_source ?? 'native', event_id: tool, retained: true }], status: 'established', reason: null });
      for (const c of carrying) {
        out.push({ ...base, relation_id: id(), type: 'launch_ack_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
      }
      const delivered = later.filter((c) => deliveryIn(c, child, input.agentPaths?.[child.native_id]));
      if (delivered.length > 0) {
        out.push({ ...base, relation_id: id(), type: 'result_delivered', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: 'calls.jsonl', event_id: delivered[0]!.call_id, retained: true }], status: 'established', reason: null });
        for (const c of delivered) {
          out.push({ ...base, relation_id: id(), type: 'result_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
        }
      }
      continue;
    }
    if (carrying.length > 0) {
      out.push({ ...base, relation_id: id(), type: 'result_delivered', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: 'calls.jsonl', event_id: carrying[0]!.call_id, retained: true }], status: 'established', reason: null });
    }
    for (const c of carrying) {
      out.push({ ...base, relation_id: id(), type: 'result_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
    }
  }
  return out;
}
