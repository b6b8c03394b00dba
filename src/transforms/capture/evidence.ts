import { createHash } from 'node:crypto';
import type { Call } from '../../schemas/call.js';
import { rawContextBytesOf } from '../../schemas/call-context.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import { wireProtocol } from '../protocols/index.js';

type Json = Record<string, any>;

/**
 * What the relation correlators need of one call, taken once as it passes (its request body parsed once, then let
 * go): ids, the tool calls its output made, the spawn results its input carries, the children whose completion it
 * delivers. A capture's correlators hold these, never the calls or their bodies.
 */
export interface CallEvidence {
  call_id: string;
  seq: number;
  protocol: Call['protocol'];
  participant_id: string | null;
  response_id: string | null;
  tool_refs: Call['tool_refs'];
  /** Tool-call ids whose results this call's input carries, of those a relation can use (the watched ones). */
  results: string[];
  /** Native ids of the watched children whose completion this call's input delivers (see deliveryIn). */
  delivers: string[];
  /** Tool ids of the delegations that resumed a watched child whose completion this call's input delivers. */
  resumesDelivered: string[];
  /** Chat Completions and Anthropic Messages: the tool calls the output emitted, and the assistant tool-call groups the input sends back. */
  emitted: ToolCallKey[];
  sent: ToolCallKey[][];
}

/** A tool call as the rewritten-id check compares it: its id, and its name and arguments as one digest. */
export interface ToolCallKey {
  id: string;
  key: string;
}

/** The children a capture's relations are about: what each call's evidence is checked against. */
export interface EvidenceWatch {
  children: readonly { native_id: string; spawn_tool_call_id: string | null; resumed_by?: readonly { tool_call_id: string; parent_participant_id: string }[] | undefined }[];
  /** Codex v2: a child's agent path (the author of its answers). */
  agentPaths?: Readonly<Record<string, string>>;
  /** Spawn tool ids, and the same with every character that is not a letter or digit dropped (a rewritten id). */
  ids: ReadonlySet<string>;
  /** The participants some child was spawned by: only their calls' inputs can carry a child's result. */
  parents: ReadonlySet<string>;
  /** The harness's delivery evidence (none: no call delivers a child's completion but through a tool result). */
  delivery?: DeliveryRecogniser;
}

export function evidenceWatch(participants: readonly ParticipantUsage[], agentPaths?: Readonly<Record<string, string>>, delivery?: DeliveryRecogniser): EvidenceWatch {
  const children = participants.filter((p) => p.role === 'child');
  const ids = new Set<string>();
  for (const tool of children.flatMap((c) => [c.spawn_tool_call_id, ...(c.resumed_by ?? []).map((r) => r.tool_call_id)])) {
    if (!tool) continue;
    ids.add(tool);
    ids.add(tool.replace(/[^A-Za-z0-9]/g, ''));
    // A composite `call_id|item_id` (OpenClaw on Responses): a function_call_output names the call_id alone.
    if (tool.includes('|')) ids.add(resultIdOf(tool));
  }
  const parents = new Set(children.flatMap((c) => [...(c.parent ? [c.parent] : []), ...(c.resumed_by ?? []).map((r) => r.parent_participant_id)]));
  return { children, ids, parents, ...(agentPaths ? { agentPaths } : {}), ...(delivery ? { delivery } : {}) };
}

/**
 * A call's request body, parsed for this look only: a lazily read call's bytes are parsed here and let go (its
 * `context` getter would keep the parse on the call for the whole capture).
 */
export function contextOnce(call: Call): Json {
  const bytes = rawContextBytesOf(call);
  if (bytes) return (JSON.parse(bytes.toString('utf8')) ?? {}) as Json;
  return (call.context ?? {}) as Json;
}

export function callEvidence(call: Call, watch: EvidenceWatch): CallEvidence {
  const chat = call.protocol === 'openai-chat-completions' || call.protocol === 'anthropic-messages';
  const parent = call.participant_id !== null && watch.parents.has(call.participant_id);
  // Most calls carry nothing a relation uses (no child was spawned by their participant): their body stays unparsed.
  const body = parent || chat ? contextOnce(call) : {};
  const results = parent ? [...toolResultIdsOf(call.protocol, body)].filter((id) => watch.ids.has(id)) : [];
  const delivered = watch.delivery;
  const delivers = parent && delivered ? watch.children.filter((child) => delivered(call.protocol, body, child, watch.agentPaths?.[child.native_id])).map((c) => c.native_id) : [];
  const resumesDelivered =
    parent && delivered
      ? watch.children.flatMap((child) => (child.resumed_by ?? []).filter((r) => r.parent_participant_id === call.participant_id && delivered(call.protocol, body, { native_id: child.native_id, spawn_tool_call_id: r.tool_call_id })).map((r) => r.tool_call_id))
      : [];
  return {
    call_id: call.call_id,
    seq: call.seq,
    protocol: call.protocol,
    participant_id: call.participant_id,
    response_id: call.response_id,
    tool_refs: call.tool_refs,
    results,
    delivers,
    resumesDelivered,
    emitted: chat ? outputToolCalls(call.protocol, call.output) : [],
    sent: chat ? sentToolCallGroups(call.protocol, body) : [],
  };
}

/** The id a tool's result names it by: a composite `call_id|item_id`'s call_id (Responses results carry no item id), else itself. */
export function resultIdOf(tool: string): string {
  const bar = tool.indexOf('|');
  return bar === -1 ? tool : tool.slice(0, bar);
}

/** The tool-call ids whose results a request body carries, in its protocol's shape (none for an undecoded one). */
export function toolResultIdsOf(protocol: Call['protocol'], body: Json): Set<string> {
  return wireProtocol(protocol)?.toolResultIds(body) ?? new Set();
}

/**
 * A harness's own evidence that a request body delivers a finished child's result into its parent's input, naming
 * that child (HarnessAdapter.delivery: Claude Code's <task-notification>, Codex's wait_agent status and FINAL_ANSWER,
 * OpenClaw's completion event, dsh's settlement notice). `agentPath`: the child's agent path where the harness has
 * one (Codex v2). Text alone without the child's ids is never proof.
 */
export type DeliveryRecogniser = (protocol: Call['protocol'], body: Json, child: { native_id: string; spawn_tool_call_id: string | null }, agentPath?: string) => boolean;

const keyOf = (name: string, args: string) => createHash('sha1').update(name).update('\0').update(args).digest('base64');

/** An Anthropic tool_use block's name and input (input as JSON: the same object serialises the same way). */
const toolUseKey = (b: Json): ToolCallKey => ({ id: String(b.id ?? ''), key: keyOf(String(b.name ?? ''), JSON.stringify(b.input ?? {})) });

function outputToolCalls(protocol: Call['protocol'], output: unknown): ToolCallKey[] {
  if (protocol === 'anthropic-messages') return (((output ?? {}) as Json).content ?? ([] as Json[])).filter((b: Json) => b?.type === 'tool_use').map(toolUseKey);
  const message = (((output ?? {}) as Json).choices?.[0]?.message ?? {}) as Json;
  return ((message.tool_calls ?? []) as Json[]).map((t) => ({ id: String(t.id ?? ''), key: keyOf(String(t.function?.name ?? ''), String(t.function?.arguments ?? '')) }));
}

function sentToolCallGroups(protocol: Call['protocol'], body: Json): ToolCallKey[][] {
  const groups: ToolCallKey[][] = [];
  for (const m of (body.messages ?? []) as Json[]) {
    if (m.role !== 'assistant') continue;
    if (protocol === 'anthropic-messages') {
      const uses = Array.isArray(m.content) ? (m.content as Json[]).filter((b) => b?.type === 'tool_use') : [];
      if (uses.length > 0) groups.push(uses.map(toolUseKey));
      continue;
    }
    if (!Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
    groups.push((m.tool_calls as Json[]).map((t) => ({ id: String(t.id ?? ''), key: keyOf(String(t.function?.name ?? ''), String(t.function?.arguments ?? '')) })));
  }
  return groups;
}
