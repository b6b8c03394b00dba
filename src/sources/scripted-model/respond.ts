import { withTokenIds } from './token-ids.js';
import { randomBytes } from 'node:crypto';
import type { Protocol } from '../../schemas/call.js';
import type { Conversation } from './conversation.js';
import type { Script, ScriptTurn } from './script.js';

type Json = Record<string, any>;

export interface PlannedCall {
  name: string;
  input: Json | string;
  custom: boolean;
}

export interface Reply {
  scenario: string;
  turn: number;
  thinking: string | undefined;
  text: string | undefined;
  calls: PlannedCall[];
  /** The answer stopped at the output-token limit (the turn's `at_limit`). */
  atLimit?: boolean;
  /** Messages: a redacted_thinking block's opaque data. */
  redactedThinking?: string;
}

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const randomId = (n: number) => Array.from(randomBytes(n), (b) => B62[b % 62]).join('');

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (value === '{{agent_ids}}') return JSON.parse(vars.agent_ids ?? '[]') as unknown; // a list, not a string
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? '');
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

/** How the scripted model's reply begins when the script cannot go on (the harness did not offer a tool it needs). */
export const SCRIPT_ERROR_PREFIX = 'SCRIPT ERROR:';

function findCwd(haystack: string): string {
  const m = /(?:Primary working directory|Working directory|working directory is|<cwd>)[:\s]*(\/[^\s`'"<]+)/i.exec(haystack);
  return m ? m[1]!.replace(/[.,;]$/, '') : '.';
}

/**
 * The script's reply to a conversation. The latest user message that holds a scenario tag picks the
 * scenario; the number of model turns since that message picks the turn. Decided from the conversation
 * alone (no server state), so retries, sub-agents and replayed histories all get consistent answers.
 */
export function decide(script: Script, c: Conversation): Reply {
  // A scenario named by the system prompt wins (a user simulator): its turns count from the conversation's start.
  let scenario: Script['scenarios'][number] | undefined = script.scenarios.find((s) => s.match_in === 'system' && c.system.includes(s.match));
  let at = -1;
  for (let i = c.events.length - 1; i >= 0 && !scenario; i--) {
    const e = c.events[i]!;
    if (e.kind !== 'user') continue;
    scenario = script.scenarios.find((s) => s.match_in !== 'system' && e.text.includes(s.match));
    if (scenario) at = i;
  }
  const lastResult = [...c.events].reverse().find((e) => e.kind === 'tool_result');
  // What a child sent back last: a tool result (a spawn's report, Codex v1's wait), or Codex v2's agent message.
  const lastReport = [...c.events].reverse().find((e) => e.kind === 'tool_result' || (e.kind === 'user' && e.fromAgent));
  const lastUser = [...c.events].reverse().find((e) => e.kind === 'user');
  let lastAgentId = '';
  if (lastResult && lastResult.kind === 'tool_result') {
    try {
      const parsed = JSON.parse(lastResult.text) as { agent_id?: unknown };
      if (typeof parsed.agent_id === 'string') lastAgentId = parsed.agent_id;
    } catch {
      // not JSON: no agent id
    }
  }
  // The agent id a spawn returned (Codex v1), from the latest spawn output in the conversation.
  for (const e of [...c.events].reverse()) {
    if (lastAgentId || e.kind !== 'tool_result') continue;
    const m = /"agent_id"\s*:\s*"([^"]+)"/.exec(e.text);
    if (m) lastAgentId = m[1]!;
  }
  // Claude Code names the agent a delegation ran in its result: `agentId: <id> (use SendMessage with to: '<id>' …)`.
  for (const e of [...c.events].reverse()) {
    if (lastAgentId || e.kind !== 'tool_result') continue;
    const m = /\bagentId: ([0-9a-z]+) \(use SendMessage/.exec(e.text);
    if (m) lastAgentId = m[1]!;
  }
  // Every agent id spawn outputs returned so far (Codex v1), to wait on all of them.
  const agentIds = [...new Set(c.events.flatMap((e) => (e.kind === 'tool_result' ? [...e.text.matchAll(/"agent_id"\s*:\s*"([^"]+)"/g)].map((m) => m[1]!) : [])))];
  const vars = {
    last_agent_id: lastAgentId,
    agent_ids: JSON.stringify(agentIds),
    // Each spawned agent by order (agent_id_0, agent_id_1, ...): to wait for one child after another.
    ...Object.fromEntries(agentIds.map((id, i) => [`agent_id_${i}`, id])),
    last_user_text: lastUser && lastUser.kind === 'user' ? lastUser.text.slice(0, 4000).replace(/\s+/g, ' ').trim() : '',
    cwd: findCwd(c.haystack),
    last_tool_result: lastResult && lastResult.kind === 'tool_result' ? lastResult.text.slice(0, 4000).replace(/\s+/g, ' ').trim() : '(no tool result)',
    last_report: lastReport && lastReport.kind !== 'assistant' ? lastReport.text.slice(0, 4000).replace(/\s+/g, ' ').trim() : '(no report)',
  };
  let turn: ScriptTurn = script.fallback;
  let k = 0;
  if (scenario) {
    k = c.events.slice(at + 1).filter((e) => e.kind === 'assistant').length;
    // A turn `if_offered` counts only where this request offers one of its tools (a harness's tools stay the same
    // through a conversation, so the turns stay in step).
    const turns = scenario.turns.filter((t) => !t.if_offered || (t.tool_calls ?? []).some((alts) => alts.some((a) => c.tools.has(a.name))));
    const last = turns[turns.length - 1]!;
    // Past the end: repeat a closing text turn, never a tool turn (that would loop a harness forever).
    turn = turns[k] ?? (last.tool_calls?.length ? { text: `Script '${scenario.name}' is finished.` } : last);
  }
  const calls: PlannedCall[] = [];
  for (const alternatives of turn.tool_calls ?? []) {
    const choice = alternatives.find((a) => c.tools.has(a.name) && (a.when_property === undefined || a.when_property in (c.tools.get(a.name)?.parameters.properties ?? {}))) ?? alternatives.find((a) => a.even_if_absent);
    if (!choice) {
      calls.length = 0;
      return {
        scenario: scenario?.name ?? 'fallback',
        turn: k,
        thinking: undefined,
        text: `${SCRIPT_ERROR_PREFIX} none of ${alternatives.map((a) => a.name).join(', ')} is offered (tools: ${[...c.tools.keys()].join(', ')})`,
        calls,
      };
    }
    const offered = c.tools.get(choice.name);
    let input = fill(choice.input, vars) as Json | string;
    if (choice.input_if_property && typeof input === 'object') {
      const props: Json = offered?.parameters.properties ?? {};
      for (const [key, v] of Object.entries(choice.input_if_property)) if (key in props) input = { ...input, [key]: fill(v, vars) };
    }
    calls.push({ name: choice.name, input, custom: offered?.custom === true || typeof input === 'string' });
  }
  return {
    scenario: scenario?.name ?? 'fallback',
    turn: k,
    thinking: turn.thinking === undefined ? undefined : (fill(turn.thinking, vars) as string),
    text: turn.text === undefined ? undefined : (fill(turn.text, vars) as string),
    calls,
    ...(turn.at_limit ? { atLimit: true } : {}),
    ...(turn.redacted_thinking ? { redactedThinking: turn.redacted_thinking } : {}),
  };
}

function usageCounts(body: unknown, reply: Reply): { input: number; cached: number; output: number; reasoning: number } {
  const approx = Math.ceil(JSON.stringify(body).length / 4);
  const cached = Math.floor(approx * 0.8);
  const reasoning = reply.thinking ? Math.ceil(reply.thinking.length / 4) : 0;
  const output = Math.max(1, Math.ceil(JSON.stringify([reply.text, reply.calls]).length / 4) + reasoning);
  return { input: approx, cached, output, reasoning };
}

export function anthropicMessage(body: Json, c: Conversation, reply: Reply): Json {
  const content: Json[] = [];
  if (reply.redactedThinking && c.thinking) content.push({ type: 'redacted_thinking', data: reply.redactedThinking });
  if (reply.thinking && c.thinking) content.push({ type: 'thinking', thinking: reply.thinking, signature: `sig_${randomId(40)}` });
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const call of reply.calls) content.push({ type: 'tool_use', id: `toolu_01${randomId(22)}`, name: call.name, input: call.input });
  const u = usageCounts(body, reply);
  return {
    id: `msg_01${randomId(22)}`,
    type: 'message',
    role: 'assistant',
    model: c.model,
    content,
    stop_reason: reply.atLimit ? 'max_tokens' : reply.calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: u.input - u.cached, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cached, output_tokens: u.output, service_tier: 'standard' },
  };
}

export function chatCompletion(body: Json, c: Conversation, reply: Reply): Json {
  const message: Json = { role: 'assistant', content: reply.text ?? null };
  if (reply.thinking) message.reasoning_content = reply.thinking;
  if (reply.calls.length > 0) {
    message.tool_calls = reply.calls.map((call) => ({
      id: `call_${randomId(24)}`,
      type: 'function',
      function: { name: call.name, arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input) },
    }));
  }
  const u = usageCounts(body, reply);
  return {
    id: `chatcmpl-${randomId(24)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: c.model,
    choices: [{ index: 0, message, finish_reason: reply.atLimit ? 'length' : reply.calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: {
      prompt_tokens: u.input,
      completion_tokens: u.output,
      total_tokens: u.input + u.output,
      prompt_tokens_details: { cached_tokens: u.cached },
      completion_tokens_details: { reasoning_tokens: u.reasoning },
    },
  };
}

export function responsesResponse(body: Json, c: Conversation, reply: Reply): Json {
  const output: Json[] = [];
  if (reply.thinking) output.push({ id: `rs_${randomId(24)}`, type: 'reasoning', summary: [{ type: 'summary_text', text: reply.thinking }] });
  for (const call of reply.calls) {
    const slash = call.name.indexOf('/');
    const naming = slash > 0 ? { name: call.name.slice(slash + 1), namespace: call.name.slice(0, slash) } : { name: call.name };
    if (call.custom) output.push({ id: `ctc_${randomId(24)}`, type: 'custom_tool_call', status: 'completed', call_id: `call_${randomId(24)}`, ...naming, input: String(call.input) });
    else output.push({ id: `fc_${randomId(24)}`, type: 'function_call', status: 'completed', call_id: `call_${randomId(24)}`, ...naming, arguments: JSON.stringify(call.input) });
  }
  if (reply.text) output.push({ id: `msg_${randomId(24)}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] });
  const u = usageCounts(body, reply);
  return {
    id: `resp_${randomId(24)}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: c.model,
    ...(reply.atLimit ? { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } : { status: 'completed' }),
    output,
    usage: {
      input_tokens: u.input,
      input_tokens_details: { cached_tokens: u.cached },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning },
      total_tokens: u.input + u.output,
    },
  };
}

export function buildResponse(protocol: Protocol, body: Json, c: Conversation, reply: Reply): Json {
  if (protocol === 'anthropic-messages') return anthropicMessage(body, c, reply);
  if (protocol === 'openai-chat-completions') return withTokenIds(body, chatCompletion(body, c, reply));
  return responsesResponse(body, c, reply);
}
