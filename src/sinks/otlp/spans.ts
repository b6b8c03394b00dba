import { ROOT_CONTEXT as ROOT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import type { Call } from '../../schemas/call.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import { readableRequest, readableResponse, type ReadablePart } from '../../transforms/protocols/readable.js';
import { costSource, isScriptedModel, PRICE_TABLE, priceCall } from '../../transforms/cost/price-table.js';
import { wireProtocol } from '../../transforms/protocols/index.js';
import { sampleLocation } from '../sample-location.js';
import { GENAI, OPERATION, PROVIDER } from './genai-names.js';
import { addTo } from '../../core/multimap.js';

/** What a sample's trace holds: one invoke_agent span per participant, a chat span per call, an execute_tool span per tool call. */
export interface SampleTrace {
  agents: number;
  chats: number;
  tools: number;
}

interface CallFacts {
  call: Omit<Call, 'context' | 'output'>;
  finishReason: string | null;
  content?: Attributes;
}

type Participant = { participant: string; role: string; native_id: string; parent: string | null; depth: number; spawn_tool_call_id: string | null; status: string; tokens: Record<string, number>; cost_usd?: number | null; priced_cost_usd?: number | null };

const time = (iso: string) => new Date(iso);
const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : NaN);

/**
 * A sample as one trace of GenAI spans, from its recorded calls, agent tree and relations (nothing inferred): the
 * root participant's invoke_agent span is the trace's root; a sub-agent's invoke_agent span is a child of the
 * execute_tool span of the tool call that spawned it (of its parent's agent span when that call is not among the
 * calls); each call a chat span under its participant, with its real start and end; each tool call an execute_tool
 * span from the end of the call that asked for it to the start of the call whose input carried its result, linked to
 * that call's chat span (result_in_context). null: the sample has no captured calls (nothing to time spans by).
 * Message content is written only with `content`.
 */
export async function sampleTrace(sample: FinishedSample, tracer: Tracer, options: { content: boolean }): Promise<SampleTrace | null> {
  const calls: CallFacts[] = [];
  for await (const c of sample.calls()) {
    const { context, output, ...rest } = c;
    const facts: CallFacts = { call: rest, finishReason: wireProtocol(c.protocol)?.finishReason((output ?? {}) as Record<string, unknown>) ?? null };
    if (options.content) facts.content = contentAttributes(c);
    calls.push(facts);
  }
  if (calls.length === 0) return null;
  calls.sort((a, b) => a.call.seq - b.call.seq);
  const relations = await sample.relations();
  const info = sample.info;
  const where = sampleLocation(sample.dir);

  const declared = (info.runtime?.participants ?? []) as Participant[];
  const root: Participant = declared.find((p) => p.role === 'root') ?? { participant: 'root', role: 'root', native_id: '', parent: null, depth: 0, spawn_tool_call_id: null, status: info.status, tokens: {} };
  const people = new Map<string, Participant>([[root.participant, root], ...declared.filter((p) => p !== root).map((p) => [p.participant, p] as const)]);
  const owner = (c: CallFacts) => (c.call.participant_id && people.has(c.call.participant_id) ? c.call.participant_id : root.participant);
  const callsOf = new Map<string, CallFacts[]>();
  const callById = new Map<string, CallFacts>();
  for (const c of calls) {
    addTo(callsOf, owner(c), c);
    callById.set(c.call.call_id, c);
  }

  // Each agent's span covers its own calls and its descendants' spans.
  const span = new Map<string, { start: number; end: number }>();
  for (const [id, own] of callsOf) {
    // A loop, not Math.min(...): an agent with a hundred thousand calls would overflow the spread's stack.
    const times = { start: Infinity, end: -Infinity };
    for (const c of own) {
      times.start = Math.min(times.start, ms(c.call.started_at));
      times.end = Math.max(times.end, ms(c.call.ended_at ?? c.call.started_at));
    }
    span.set(id, times);
  }
  const byDepth = [...people.values()].sort((a, b) => b.depth - a.depth);
  for (const p of byDepth) {
    const own = span.get(p.participant);
    const up = p.parent ? people.get(p.parent) : p === root ? undefined : root;
    if (!own || !up) continue;
    const theirs = span.get(up.participant);
    span.set(up.participant, theirs ? { start: Math.min(theirs.start, own.start), end: Math.max(theirs.end, own.end) } : { ...own });
  }

  const inContext = new Map<string, string>();
  for (const r of relations) if (r.type === 'result_in_context' && r.status === 'established' && r.tool_call_id && r.in_call_id && !inContext.has(r.tool_call_id)) inContext.set(r.tool_call_id, r.in_call_id);

  const chatSpans = new Map<string, Span>();
  const toolSpans = new Map<string, Span>();
  const counts: SampleTrace = { agents: 0, chats: 0, tools: 0 };
  const agentSpans = new Map<string, Span>();
  for (const p of [...people.values()].sort((a, b) => a.depth - b.depth)) {
    const times = span.get(p.participant);
    if (!times) continue; // an agent without a call (and none below it): nothing times it
    const parentSpan = (p.spawn_tool_call_id ? toolSpans.get(p.spawn_tool_call_id) : undefined) ?? (p.parent ? agentSpans.get(p.parent) : p === root ? undefined : agentSpans.get(root.participant));
    const parent: Context | undefined = parentSpan ? trace.setSpan(ROOT, parentSpan) : undefined;
    const name = p === root ? info.harness.name : `${info.harness.name} sub-agent`;
    const attributes: Attributes = {
      [GENAI.operation]: OPERATION.invokeAgent,
      [GENAI.agentId]: p.participant,
      [GENAI.agentName]: name,
      ...(p.native_id ? { [GENAI.conversationId]: p.native_id } : {}),
      ...tokenAttributes(p.tokens.input, p.tokens.cache_read, p.tokens.cache_creation, p.tokens.output, p.tokens.reasoning),
      'roller.participant.role': p.role,
      'roller.participant.depth': p.depth,
      'roller.participant.status': p.status,
      ...((p as { cost_source?: string }).cost_source === 'scripted' ? SCRIPTED : costAttributes(p.cost_usd, p.priced_cost_usd)),
      ...(p.spawn_tool_call_id ? { 'roller.spawn_tool_call_id': p.spawn_tool_call_id } : {}),
      ...(p === root ? { 'roller.run': where.run, 'roller.sample': where.sample, 'roller.index': info.index, 'roller.task_id': info.task_id, 'roller.model': info.model, 'roller.harness': info.harness.name, 'roller.harness.version': info.harness.version, 'roller.status': info.status } : {}),
    };
    const agent = tracer.startSpan(`${OPERATION.invokeAgent} ${name}`, { kind: SpanKind.INTERNAL, startTime: new Date(times.start), attributes }, parent ?? ROOT);
    if (p.status === 'failed' || p.status === 'error') agent.setStatus({ code: SpanStatusCode.ERROR, message: `the agent ended ${p.status}` });
    agentSpans.set(p.participant, agent);
    counts.agents++;
    const inside = trace.setSpan(ROOT, agent);
    for (const c of callsOf.get(p.participant) ?? []) {
      chatSpans.set(c.call.call_id, chatSpan(tracer, c, inside, isScriptedModel(info.model)));
      counts.chats++;
    }
    for (const c of callsOf.get(p.participant) ?? []) {
      for (const ref of c.call.tool_refs) {
        const into = inContext.get(ref.id);
        const target = into ? chatSpans.get(into) : undefined;
        const start = ms(c.call.ended_at ?? c.call.started_at);
        const intoCall = into ? callById.get(into) : undefined;
        const end = intoCall ? Math.max(start, ms(intoCall.call.started_at)) : start;
        const links: Link[] = target ? [{ context: target.spanContext(), attributes: { 'roller.relation': 'result_in_context' } }] : [];
        const tool = tracer.startSpan(
          `${OPERATION.executeTool} ${ref.name}`,
          { kind: SpanKind.INTERNAL, startTime: new Date(start), links, attributes: { [GENAI.operation]: OPERATION.executeTool, [GENAI.toolName]: ref.name, [GENAI.toolCallId]: ref.id, [GENAI.toolType]: 'function', 'roller.call_id': c.call.call_id, 'roller.result_in_context': Boolean(target) } },
          inside,
        );
        tool.end(new Date(end));
        toolSpans.set(ref.id, tool);
        counts.tools++;
      }
    }
    agent.end(new Date(times.end));
  }
  return counts;
}

function chatSpan(tracer: Tracer, c: CallFacts, parent: Context, scripted: boolean): Span {
  const call = c.call;
  const model = call.response_model ?? call.request_model ?? 'unknown';
  const u = call.usage.normalized;
  const attributes: Attributes = {
    [GENAI.operation]: OPERATION.chat,
    [GENAI.provider]: call.protocol === 'anthropic-messages' ? PROVIDER.anthropic : PROVIDER.openai,
    ...(call.request_model ? { [GENAI.requestModel]: call.request_model } : {}),
    ...(call.response_model ? { [GENAI.responseModel]: call.response_model } : {}),
    ...(call.response_id ? { [GENAI.responseId]: call.response_id } : {}),
    ...(c.finishReason ? { [GENAI.finishReasons]: [c.finishReason] } : {}),
    ...(u ? tokenAttributes(u.input, u.cached_input, u.cache_creation, u.output, u.reasoning) : {}),
    'roller.call_id': call.call_id,
    'roller.seq': call.seq,
    'roller.protocol': call.protocol,
    ...(call.http_status !== null ? { 'http.response.status_code': call.http_status } : {}),
    ...(call.first_byte_at ? { 'roller.ttfb_ms': ms(call.first_byte_at) - ms(call.started_at) } : {}),
    ...(scripted ? SCRIPTED : costAttributes(null, priceCall(call).usd)),
    ...(c.content ?? {}),
  };
  const s = tracer.startSpan(`${OPERATION.chat} ${model}`, { kind: SpanKind.CLIENT, startTime: time(call.started_at), attributes }, parent);
  if (call.execution_status !== 'completed' || (call.http_status ?? 0) >= 400) s.setStatus({ code: SpanStatusCode.ERROR, message: `${call.execution_status}${call.http_status ? ` (HTTP ${call.http_status})` : ''}${call.errors[0] ? `: ${call.errors[0].message}` : ''}` });
  s.end(time(call.ended_at ?? call.started_at));
  return s;
}

/** The embedded scripted model's calls cost nothing (info.json's cost_source 'scripted'). */
const SCRIPTED: Attributes = { 'roller.cost_usd.priced': 0, 'roller.cost_source': 'scripted' };

/** Both costs where both exist, and which one to use (the same rule as info.json's cost_source). */
function costAttributes(reported: number | null | undefined, priced: number | null | undefined): Attributes {
  return {
    ...(typeof reported === 'number' ? { 'roller.cost_usd.reported': reported } : {}),
    ...(typeof priced === 'number' ? { 'roller.cost_usd.priced': priced, 'roller.price_table': PRICE_TABLE } : {}),
    'roller.cost_source': costSource(reported, priced ?? null),
  };
}

/**
 * gen_ai.usage.input_tokens is every input token, cached ones included (the convention's note); the cache reads and
 * writes are also given apart, and roller's own uncached count as roller.usage.input.
 */
function tokenAttributes(input = 0, cacheRead = 0, cacheCreation = 0, output = 0, reasoning = 0): Attributes {
  return {
    [GENAI.inputTokens]: input + cacheRead + cacheCreation,
    [GENAI.cacheReadTokens]: cacheRead,
    [GENAI.cacheCreationTokens]: cacheCreation,
    [GENAI.outputTokens]: output,
    [GENAI.reasoningTokens]: reasoning,
    'roller.usage.input': input,
  };
}

/** The call's messages in the convention's shape (role + typed parts), from the request and response as recorded. */
function contentAttributes(c: Call): Attributes {
  const request = readableRequest(c.protocol, c.context);
  const response = readableResponse(c.protocol, c.output);
  return {
    [GENAI.systemInstructions]: JSON.stringify(request.system.map((content) => ({ type: 'text', content }))),
    [GENAI.inputMessages]: JSON.stringify(request.turns.map((t) => ({ role: t.role, parts: t.parts.map(part) }))),
    [GENAI.outputMessages]: JSON.stringify([{ role: 'assistant', parts: response.parts.map(part), ...(response.stop_reason ? { finish_reason: response.stop_reason } : {}) }]),
  };
}

function part(p: ReadablePart): Record<string, unknown> {
  switch (p.kind) {
    case 'text':
      return { type: 'text', content: p.text };
    case 'reasoning':
      return { type: 'reasoning', content: p.text };
    case 'tool_call':
      return { type: 'tool_call', id: p.id, name: p.name, arguments: p.input };
    case 'tool_result':
      return { type: 'tool_call_response', id: p.id, response: p.text };
    default:
      return { type: p.kind, ...p };
  }
}
