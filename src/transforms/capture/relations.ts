import { randomBytes } from 'node:crypto';
import { RELATION_SCHEMA, type Relation } from '../../schemas/relation.js';
import type { Call } from '../../schemas/call.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Resumption } from '../../schemas/manifest.js';
import type { Announcements } from '../../schemas/native-capture.js';
import { callEvidence, contextOnce, evidenceWatch, resultIdOf, toolResultIdsOf, type CallEvidence, type DeliveryRecogniser } from './evidence.js';

/** The tool-call ids whose results a request body carries, for each protocol's shape. */
export function toolResultIdsIn(call: Call): Set<string> {
  return toolResultIdsOf(call.protocol, contextOnce(call));
}

/** Whether a call's actual input delivers this child's completion, by the harness's delivery evidence. */
export function deliveryIn(call: Call, child: { native_id: string; spawn_tool_call_id: string | null }, delivery: DeliveryRecogniser, agentPath?: string): boolean {
  return delivery(call.protocol, contextOnce(call), child, agentPath);
}

/**
 * Tool-call ids a harness rewrote between a model's output and the history it sends back (OpenClaw: the model's
 * `call_0001` returns as `call0001` on the wire, while its transcript keeps `call_0001`). Established from the
 * actual requests only: a later request's assistant message whose tool calls are, in order, the same names and
 * arguments as exactly one earlier call's output, and whose ids differ from that output's only by characters
 * other than letters and digits. Returns history id -> the id the model emitted (Chat Completions; Anthropic Messages,
 * where OpenClaw's `toolu_01…` returns as `toolu01…`).
 */
export function rewrittenToolIds(evidence: readonly CallEvidence[]): Map<string, string> {
  const aliases = new Map<string, string>();
  const chat = evidence.filter((c) => c.protocol === 'openai-chat-completions' || c.protocol === 'anthropic-messages').sort((a, b) => a.seq - b.seq);
  const emitted = chat.filter((c) => c.emitted.length > 0);
  if (emitted.length === 0) return aliases;
  for (const c of chat) {
    for (const sent of c.sent) {
      if (sent.every((t) => aliases.has(t.id) || emitted.some((e) => e.emitted.some((o) => o.id === t.id)))) continue; // nothing rewritten
      const sources = emitted.filter((e) => e.seq < c.seq && e.participant_id === c.participant_id && e.emitted.length === sent.length && e.emitted.every((o, i) => o.key === sent[i]!.key));
      if (sources.length !== 1) continue; // none, or ambiguous: no alias rather than a guess
      sources[0]!.emitted.forEach((o, i) => {
        const h = sent[i]!.id;
        if (h !== o.id && h === o.id.replace(/[^A-Za-z0-9]/g, '')) aliases.set(h, o.id);
      });
    }
  }
  return aliases;
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
  /** OpenClaw: deliveries bound to announcement runs. */
  announcements?: Announcements;
  /** The harness's delivery evidence (HarnessAdapter.delivery). */
  delivery?: DeliveryRecogniser;
}

/** deriveRelations over calls (each call's evidence taken here): for scripts holding the calls of a capture. */
export function deriveRelations(input: RelationInput): Relation[] {
  const watch = evidenceWatch(input.participants, input.agentPaths, input.delivery);
  return relationsFromEvidence(
    input.calls.map((c) => callEvidence(c, watch)),
    input.participants,
    input.scope,
    input.announcements,
  );
}

/**
 * Relations with evidence (seeds/000): spawn and child_completed / child_failed from native evidence, the
 * parent call found by the spawn tool-call id in its output (else "unknown"), and one result_in_context per
 * later call of the parent whose actual input carries that tool-call id's result. A launch acknowledgement
 * (a background spawn's immediate result) is never completion. From each call's evidence (callEvidence), taken
 * as the calls passed: the calls themselves are not held.
 */
export function relationsFromEvidence(evidence: readonly CallEvidence[], participants: readonly ParticipantUsage[], scopeGiven?: string, announcements?: Announcements): Relation[] {
  const scope = scopeGiven ?? randomBytes(4).toString('hex');
  let n = 0;
  const id = () => `r-${scope}-${String(n++).padStart(6, '0')}`;
  const callsOf = new Map<string, CallEvidence[]>();
  for (const e of [...evidence].sort((a, b) => a.seq - b.seq)) {
    if (e.participant_id === null) continue;
    const list = callsOf.get(e.participant_id);
    if (list) list.push(e);
    else callsOf.set(e.participant_id, [e]);
  }
  const byParticipant = (p: string) => callsOf.get(p) ?? [];
  const aliases = rewrittenToolIds(evidence);
  const out: Relation[] = [];
  for (const child of participants.filter((p) => p.role === 'child')) {
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
    const refOf = (c: CallEvidence | undefined) => {
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
    // A resumed child's status is its last delegation's: the spawn's own ending is spawn_status.
    const spawnEnded = child.resumed_by?.length ? child.spawn_status?.status : child.status;
    const spawnEndedAt = child.resumed_by?.length ? (child.spawn_status?.status_source ?? null) : child.status_source;
    if (spawnEnded === 'completed' || spawnEnded === 'failed') {
      out.push({
        ...base,
        relation_id: id(),
        type: spawnEnded === 'completed' ? 'child_completed' : 'child_failed',
        parent_call_id: parentCallId,
        in_call_id: null,
        evidence: [{ source: spawnEndedAt ?? 'native', event_id: child.native_id, retained: true }],
        status: 'established',
        reason: null,
      });
    }
    out.push(...(child.resumed_by ?? []).flatMap((r) => resumptionRelations(child, r, byParticipant(r.parent_participant_id), id)));
    // Every later parent call whose actual input carries the result of the spawn call.
    const later = parentCalls.filter((c) => spawning.length === 0 || c.seq > spawning[0]!.seq);
    const carrying = later.filter((c) => c.results.some((x) => (aliases.get(x) ?? x) === resultIdOf(tool)));
    if (child.spawn_result === 'acknowledgement') {
      // The spawn's immediate result was a launch acknowledgement, never completion: how the real result
      // reached the parent (a task-notification, a wait_agent output) is a separate relation.
      out.push({ ...base, relation_id: id(), type: 'launch_acknowledged', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: child.status_source ?? 'native', event_id: tool, retained: true }], status: 'established', reason: null });
      for (const c of carrying) {
        out.push({ ...base, relation_id: id(), type: 'launch_ack_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
      }
      const delivered = later.filter((c) => c.delivers.includes(child.native_id));
      if (delivered.length > 0) {
        // Where deliveries are announcement runs, the event's text is no proof alone: the call must be one of the run's replies.
        const run = announcements?.runs[child.native_id];
        const bound = (c: CallEvidence) => !announcements || (run !== undefined && c.response_id !== null && run.responseIds.includes(c.response_id));
        const evidenceOf = (c: CallEvidence) => [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }, ...(run && bound(c) ? [{ source: announcements!.source, event_id: run.runId, retained: true }] : [])];
        const unbound = run
          ? `the completion event is in this call's input, but the call is not a reply of the announcement run ${run.runId}`
          : `the completion event is in this call's input, but no announcement run of ${announcements?.source} names the child (without it the text alone is no proof)`;
        const first = delivered.find(bound) ?? delivered[0]!;
        out.push({ ...base, relation_id: id(), type: 'result_delivered', parent_call_id: parentCallId, in_call_id: null, evidence: evidenceOf(first), status: bound(first) ? 'established' : 'unknown', reason: bound(first) ? null : unbound });
        for (const c of delivered) {
          out.push({ ...base, relation_id: id(), type: 'result_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: evidenceOf(c), status: bound(c) ? 'established' : 'unknown', reason: bound(c) ? null : unbound });
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

/**
 * A later delegation that resumed the child (seeds/000 A9.4), judged by its own tool id: the resuming call, its
 * launch acknowledgement (the resume runs in the background) and where that reached the parent, the child's
 * ending as the completion naming this tool id said it, and the calls whose input delivered that completion.
 */
function resumptionRelations(child: ParticipantUsage, r: Resumption, parentCalls: readonly CallEvidence[], id: () => string): Relation[] {
  const tool = r.tool_call_id;
  const base = { schema: RELATION_SCHEMA, parent_participant_id: r.parent_participant_id, child_participant_id: child.participant, tool_call_id: tool, model_tool_ref: null } as const;
  const resuming = parentCalls.filter((c) => c.tool_refs.some((t) => refMatches(t, tool)));
  const parentCallId = resuming.length === 1 ? resuming[0]!.call_id : 'unknown';
  const later = parentCalls.filter((c) => resuming.length === 0 || c.seq > resuming[0]!.seq);
  const source = r.status_source?.split(/[:#]/)[0] ?? 'native';
  const out: Relation[] = [
    {
      ...base,
      relation_id: id(),
      type: 'launch_acknowledged',
      parent_call_id: parentCallId,
      in_call_id: null,
      evidence: [{ source, event_id: tool, retained: true }],
      status: parentCallId === 'unknown' ? 'unknown' : 'established',
      reason: parentCallId === 'unknown' ? `${resuming.length} parent calls carry the resuming tool call ${tool} in their output` : null,
    },
  ];
  for (const c of later.filter((x) => x.results.includes(tool))) {
    out.push({ ...base, relation_id: id(), type: 'launch_ack_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
  }
  if (r.status === 'completed' || r.status === 'failed') {
    out.push({ ...base, relation_id: id(), type: r.status === 'completed' ? 'child_completed' : 'child_failed', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: r.status_source ?? 'native', event_id: tool, retained: true }], status: 'established', reason: null });
  }
  const delivered = later.filter((c) => c.resumesDelivered.includes(tool));
  if (delivered.length > 0) {
    out.push({ ...base, relation_id: id(), type: 'result_delivered', parent_call_id: parentCallId, in_call_id: null, evidence: [{ source: 'calls.jsonl', event_id: delivered[0]!.call_id, retained: true }], status: 'established', reason: null });
  }
  for (const c of delivered) {
    out.push({ ...base, relation_id: id(), type: 'result_in_context', parent_call_id: parentCallId, in_call_id: c.call_id, evidence: [{ source: 'calls.jsonl', event_id: c.call_id, retained: true }], status: 'established', reason: null });
  }
  return out;
}
