import { isDeepStrictEqual } from 'node:util';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import { SftSegment, type SftMessage } from '../../schemas/sft.js';
import { checkValue } from '../../schemas/validate.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { anthropicSystem, anthropicTools } from '../protocols/anthropic-request.js';
import { anthropicRequestMessages, anthropicResponseMessage } from './anthropic-context.js';
import { toolNames, Unavailable } from './project.js';
import { addTo } from '../../core/multimap.js';

type Json = Record<string, any>;

/** A compaction of the main context: which call wrote its summary, and where the native record of it is. */
export interface CompactionBoundary {
  summaryCallId: string;
  /** e.g. "claude-code compact_boundary <uuid>" */
  source: string;
}

export interface SegmentMeta {
  /** sft_segments/NNNN.json, relative to the sample directory. */
  path: string;
  order: number;
  /** "session_start" for the first window, else the native compaction record that opened it. */
  boundary_source: string;
  call_ids: string[];
}

export type SegmentProjection =
  | { status: 'ok'; segments: { record: SftSegment; meta: SegmentMeta }[] }
  | { status: 'unavailable'; reason: string };

export interface SegmentOptions {
  keepThinking: boolean;
}

interface Window {
  first: Call;
  calls: Call[];
  boundary: string;
  /** How many messages its first request's context has: where the targets start (system prompt aside). */
  contextLength: number;
  messages: SftMessage[];
  images: string[];
}

/**
 * Compaction segments (seeds/003 §4.3): the main agent's training windows rebuilt from the captured
 * requests, one per context the model actually saw between compactions. `rootCalls` are the main
 * participant's calls in request order. Each window starts with a call's actual request context (system
 * prompt and messages); the assistant outputs of its calls are the targets (target_start_index is the first),
 * and the user / tool messages between them are what the next request actually added. A request that does
 * not extend its window's context starts the next window only when a compaction summary call came in
 * between. The root calls other than summary calls must correspond one-to-one with the ACTF main steps
 * (response id = the step's native message id). Anything else makes segments unavailable with the reason.
 */
export function projectSegments(actf: Actf, rootCalls: readonly Call[], compactions: readonly CompactionBoundary[], o: SegmentOptions): SegmentProjection {
  try {
    const summaries = new Map(compactions.map((c) => [c.summaryCallId, c.source]));
    const completed = rootCalls.filter((c) => c.execution_status === 'completed').sort((a, b) => a.seq - b.seq);
    const turns = completed.filter((c) => !summaries.has(c.call_id));
    checkOneToOne(actf, turns);
    for (const c of turns) if (c.protocol !== 'anthropic-messages') throw new Unavailable(`call ${c.call_id}: segments are rebuilt from Anthropic Messages requests only so far (this one is ${c.protocol})`);

    const windows: Window[] = [];
    let pendingBoundary: string | null = null;
    for (const call of completed) {
      const summary = summaries.get(call.call_id);
      if (summary !== undefined) {
        pendingBoundary = summary;
        continue;
      }
      const body = call.context as Json | null;
      if (!body || typeof body !== 'object') throw new Unavailable(`call ${call.call_id}: its request body was not captured`);
      const images: string[] = [];
      const context = anthropicRequestMessages(body, { keepThinking: o.keepThinking, images }, `call ${call.call_id}`);
      const output = anthropicResponseMessage(call, { keepThinking: o.keepThinking, images });
      const open = windows[windows.length - 1];
      if (open && extends_(context, images, open)) {
        open.messages = [...context, output];
        open.images = images;
        open.calls.push(call);
        continue;
      }
      if (open && pendingBoundary === null) {
        throw new Unavailable(`call ${call.call_id}: its request does not continue the context of call ${open.calls[open.calls.length - 1]!.call_id}, and no compaction came in between`);
      }
      windows.push({ first: call, calls: [call], boundary: open ? pendingBoundary! : 'session_start', contextLength: context.length, messages: [...context, output], images });
      pendingBoundary = null;
    }
    if (windows.length === 0) throw new Unavailable('no main-agent call to build a segment from');

    return {
      status: 'ok',
      segments: windows.map((w, i) => {
        const record = segmentRecord(w, windows[i + 1], o);
        const order = i + 1;
        return { record, meta: { path: `sft_segments/${String(order).padStart(4, '0')}.json`, order, boundary_source: w.boundary, call_ids: w.calls.map((c) => c.call_id) } };
      }),
    };
  } catch (err) {
    if (err instanceof Unavailable) return { status: 'unavailable', reason: err.message };
    throw err;
  }
}

/** The request continues the window: its messages start with everything the window holds so far. */
function extends_(context: SftMessage[], images: string[], w: Window): boolean {
  if (context.length <= w.messages.length) return false;
  return isDeepStrictEqual(context.slice(0, w.messages.length), w.messages) && isDeepStrictEqual(images.slice(0, w.images.length), w.images);
}

function checkOneToOne(actf: Actf, turns: readonly Call[]): void {
  const steps = actf.steps.map((s) => s.native_ids?.message_id);
  const byResponse = new Map<string, Call[]>();
  for (const c of turns) {
    if (!c.response_id) throw new Unavailable(`call ${c.call_id}: no response id to match an ACTF step`);
    addTo(byResponse, c.response_id, c);
  }
  for (const [id, calls] of byResponse) if (calls.length > 1) throw new Unavailable(`response ${id} came from ${calls.length} calls`);
  steps.forEach((id, i) => {
    if (!id) throw new Unavailable(`ACTF step ${i + 1} has no native message id`);
    if (!byResponse.has(id)) throw new Unavailable(`ACTF step ${i + 1} (message ${id}) has no captured main-agent call`);
  });
  const stepIds = new Set(steps);
  for (const c of turns) if (!stepIds.has(c.response_id!)) throw new Unavailable(`call ${c.call_id} (response ${c.response_id}) is no ACTF main step and no compaction summary`);
}

/**
 * The window as a segment record: system prompt of its first request, the messages, and — when the last
 * target calls tools — their results from the request that carried them next (the following window's first
 * request, which keeps the latest turns verbatim). A tool call answered nowhere makes segments unavailable.
 */
function segmentRecord(w: Window, next: Window | undefined, o: SegmentOptions): SftSegment {
  const body = w.first.context as Json;
  const system = anthropicSystem(body);
  const messages: SftMessage[] = [...(system !== '' ? [{ role: 'system' as const, content: system }] : []), ...w.messages];
  const images = [...w.images];
  const last = w.messages[w.messages.length - 1]!;
  if (last.role === 'assistant' && last.tool_calls.length > 0) {
    const nextImages: string[] = [];
    const later = next ? anthropicRequestMessages(next.first.context as Json, { keepThinking: o.keepThinking, images: nextImages }, `call ${next.first.call_id}`) : [];
    for (const call of last.tool_calls) {
      const result = later.find((m): m is Extract<SftMessage, { role: 'tool' }> => m.role === 'tool' && m.tool_call_id === call.id);
      if (!result) throw new Unavailable(`tool call '${call.id}' of call ${w.calls[w.calls.length - 1]!.call_id} has no result in any captured request`);
      if (result.content.includes('<image>')) throw new Unavailable(`the result of tool call '${call.id}' holds an image outside its window`);
      messages.push(result);
    }
  }
  const tools = anthropicTools(body);
  const names = new Set(tools.flatMap(toolNames));
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.tool_calls) if (!names.has(c.function.name)) throw new Unavailable(`tool '${c.function.name}' is not in the tools of call ${w.first.call_id}`);
  }
  const record: SftSegment = { messages, tools: tools as SftSegment['tools'], target_start_index: (system !== '' ? 1 : 0) + w.contextLength };
  if (images.length > 0) record.images = images;
  const issues = checkValue(SftSegment, record);
  if (issues.length > 0) throw new Unavailable(`the segment from call ${w.first.call_id} breaks the SFT rules: ${issues.slice(0, 3).map((i) => `${formatJsonPath(i.path as (string | number)[])}: ${i.message}`).join('; ')}`);
  return record;
}
