import { readFileSync } from 'node:fs';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { formatJsonPath } from '../../core/json-locate.js';
import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import { DeepSeekEvent } from '../../schemas/harness-events.js';
import { checkValue } from '../../schemas/validate.js';
import { newStep, timingOf } from '../../transforms/actf/step.js';
import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

export interface DeepSeekRun {
  file: string;
  sessionId: string;
  events: DeepSeekEvent[];
}

/** A roller.deepseek-events/v1 log: every line checked; one session per file; a cut last line is dropped. */
export function readDeepSeekRun(file: string): DeepSeekRun {
  const lines = readFileSync(file, 'utf8').split('\n');
  const events: DeepSeekEvent[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (i === lines.length - 1) return;
      throw new RollerError(ErrorCode.JSONL_INVALID_JSON, `${file}:${i + 1}: not JSON`, { origin: { file, line: i + 1 } });
    }
    const issues = checkValue(DeepSeekEvent, value);
    if (issues.length > 0) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:${i + 1}: not a roller.deepseek-events/v1 event (${issues.map((x) => `${formatJsonPath(x.path)}: ${x.message}`).join('; ')})`, { origin: { file, line: i + 1 } });
    events.push(value as DeepSeekEvent);
  });
  const start = events[0];
  if (start?.type !== 'session_start') throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:1: the log must open with session_start`);
  const other = events.find((e) => e.session_id !== start.session_id);
  if (other) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}: event seq ${other.seq} belongs to session ${other.session_id}, not ${start.session_id}: one session per log`);
  return { file, sessionId: start.session_id, events };
}

/** The root participant only (the sdk-minimal profile has no delegation); responseIds are the per-id join. */
export function deepSeekParticipants(run: DeepSeekRun): ParticipantUsage[] {
  const assistants = run.events.filter((e): e is Extract<DeepSeekEvent, { type: 'assistant' }> => e.type === 'assistant');
  const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
  for (const a of assistants) {
    const u = (a.usage ?? {}) as Json;
    const hit = n(u.prompt_cache_hit_tokens);
    // DeepSeek's prompt_tokens include cache hits: input is the rest.
    tokens.input += Math.max(0, n(u.prompt_tokens) - hit);
    tokens.cache_read += hit;
    tokens.output += n(u.completion_tokens);
    tokens.reasoning += n(u.completion_tokens_details?.reasoning_tokens);
  }
  const end = run.events.find((e): e is Extract<DeepSeekEvent, { type: 'session_end' }> => e.type === 'session_end');
  return [
    {
      participant: `session:${run.sessionId}`,
      role: 'root',
      native_id: run.sessionId,
      parent: null,
      spawn_tool_call_id: null,
      depth: 0,
      tokens,
      messages: assistants.length,
      message_ids: assistants.map((a) => a.response_id),
      status: end ? (end.status === 'completed' ? 'completed' : end.status === 'failed' ? 'failed' : 'unknown') : 'unknown',
      status_source: end ? `${run.file}: session_end seq ${end.seq} (${end.status})` : `${run.file}: no session_end (the run did not finish)`,
      cost_usd: null,
      cost_note: 'the runner reports no cost',
      reason: null,
      spawn_result: null,
    },
  ];
}

/** ACTF: assistant events as steps, tool_result events as the observations of their calls; tools from session_start. */
export function deepSeekToActf(run: DeepSeekRun): Actf {
  const start = run.events[0] as Extract<DeepSeekEvent, { type: 'session_start' }>;
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  let pending: string | null = null;
  for (const e of run.events) {
    if (e.type === 'user') pending = pending === null ? e.content : `${pending}\n\n${e.content}`;
    else if (e.type === 'tool_result') (stepOfCall.get(e.tool_call_id) ?? steps.at(-1))?.observation.push({ toolCallId: e.tool_call_id, content: e.content, isError: e.is_error });
    else if (e.type === 'assistant') {
      const step = newStep(steps.length + 1, pending, e.ts);
      pending = null;
      step.assistant_content.content = e.content ?? '';
      step.assistant_content.reasoning_content = e.reasoning_content ?? null;
      for (const c of e.tool_calls ?? []) {
        let args: Record<string, unknown> | string = c.function.arguments;
        try {
          const parsed: unknown = JSON.parse(args);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
        } catch {
          // kept raw: SFT says why it cannot use it
        }
        step.assistant_content.tool_calls.push({ id: c.id, name: c.function.name, type: 'function', arguments: args });
        stepOfCall.set(c.id, step);
      }
      const u = (e.usage ?? {}) as Json;
      step.metric = {
        prompt_tokens_len: n(u.prompt_tokens),
        completion_tokens_len: n(u.completion_tokens),
        cache_read_tokens_len: n(u.prompt_cache_hit_tokens),
        cache_creation_tokens_len: 0,
        reasoning_tokens_len: n(u.completion_tokens_details?.reasoning_tokens),
        cost_usd: null,
        model: start.model,
        llm_call_count: 1,
      };
      step.stop_reason = e.finish_reason;
      step.native_ids = { response_id: e.response_id };
      steps.push(step);
    }
  }
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: start.system_prompt ?? '',
    system_prompt_source: start.system_prompt ? 'native' : 'none',
    tools: (start.tools as Actf['tools']) ?? null,
    tools_source: start.tools ? 'native_derived' : 'none',
    steps,
    timing: timingOf(steps),
  };
}
