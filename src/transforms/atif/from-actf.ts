import { createHash } from 'node:crypto';
import type { Actf, ActfStep } from '../../schemas/actf.js';
import type { SampleInfo } from '../../schemas/run-info.js';

type Json = Record<string, any>;

export const ATIF_VERSION = 'ATIF-v1.7';

/** An image an exported trajectory refers to: written once under images/, named by its content hash. */
export interface AtifImage {
  path: string;
  bytes: Buffer;
}

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * ACTF content as an ATIF message: a string stays a string; blocks become ContentParts (base64 images are
 * written to images/ by content hash); a block that is neither text nor image is kept as its JSON text.
 */
function messageOf(content: unknown, images: Map<string, AtifImage>): string | Json[] {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  const parts: Json[] = [];
  for (const b of content as Json[]) {
    if (b.type === 'text') parts.push({ type: 'text', text: String(b.text ?? '') });
    else if (b.type === 'image' && b.source?.type === 'base64' && EXT[b.source.media_type]) {
      const bytes = Buffer.from(String(b.source.data), 'base64');
      const path = `images/${createHash('sha256').update(bytes).digest('hex')}.${EXT[b.source.media_type]}`;
      images.set(path, { path, bytes });
      parts.push({ type: 'image', source: { media_type: b.source.media_type, path } });
    } else if (b.type === 'image' && b.source?.type === 'path' && EXT[b.source.media_type ?? '']) {
      parts.push({ type: 'image', source: { media_type: b.source.media_type, path: String(b.source.path) } });
    } else parts.push({ type: 'text', text: JSON.stringify(b) });
  }
  return parts;
}

const nonEmpty = (m: string | Json[]) => (typeof m === 'string' ? m.trim() !== '' : m.length > 0);

/**
 * A sample's ACTF as an ATIF-v1.7 trajectory (seeds/003 §4.5): a system step, then per ACTF step a user step
 * (when it has user content) and an agent step with its calls, the results of those calls (a result whose
 * call is in another step keeps toolCallId in extra: ATIF lets a result refer only to its own step), metrics,
 * and the ACTF fields ATIF has no place for in `extra`. Totals in final_metrics; the sample in extra.roller.
 */
/** The token ids a step's model call returned (an open-model server's), by the step's native response id. */
export type StepTokens = (responseId: string) => { prompt: number[]; completion: number[]; logprobs: number[] | null } | undefined;

export function actfToAtif(actf: Actf, info: SampleInfo, sessionId: string, tokens?: StepTokens): { trajectory: Json; images: AtifImage[] } {
  const images = new Map<string, AtifImage>();
  const steps: Json[] = [];
  const next = () => steps.length + 1;
  if (actf.system_prompt !== '') steps.push({ step_id: next(), source: 'system', message: actf.system_prompt, extra: { system_prompt_source: actf.system_prompt_source } });
  const callStep = new Map<string, number>();
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  for (const s of actf.steps) {
    if (s.user_content !== null) {
      const message = messageOf(s.user_content, images);
      if (nonEmpty(message)) steps.push({ step_id: next(), source: 'user', message, ...(s.started_at ? { timestamp: s.started_at } : {}) });
    }
    steps.push(agentStep(s, next(), callStep, images, tokens));
    const m = s.metric;
    if (m) {
      prompt += m.prompt_tokens_len;
      completion += m.completion_tokens_len;
      cached += m.cache_read_tokens_len ?? 0;
    }
  }
  const tools = (actf.tools ?? []).filter((t) => (t as Json).type === 'function');
  const trajectory: Json = {
    schema_version: ATIF_VERSION,
    session_id: sessionId,
    agent: {
      name: info.harness.name,
      version: info.harness.version,
      model_name: info.model,
      ...(tools.length > 0 ? { tool_definitions: tools } : {}),
      ...(actf.tools && tools.length !== actf.tools.length ? { extra: { other_tools: actf.tools.filter((t) => (t as Json).type !== 'function') } } : {}),
    },
    steps,
    final_metrics: {
      total_prompt_tokens: prompt,
      total_completion_tokens: completion,
      total_cached_tokens: cached,
      ...(info.usage?.cost_usd != null ? { total_cost_usd: info.usage.cost_usd } : {}),
      total_steps: steps.length,
    },
    extra: {
      roller: {
        task_id: info.task_id,
        index: info.index,
        status: info.status,
        error: info.error,
        // The task grader's verdict and scores; null when the task has no grader.
        bench_scores: info.grade ? { status: info.grade.status, scores: info.grade.scores } : null,
        tools_source: actf.tools_source,
      },
    },
  };
  return { trajectory, images: [...images.values()] };
}

function agentStep(s: ActfStep, stepId: number, callStep: Map<string, number>, images: Map<string, AtifImage>, tokens?: StepTokens): Json {
  const calls = s.assistant_content.tool_calls.map((c) => {
    callStep.set(c.id, stepId);
    const extra: Json = { ...(c.extra ?? {}) };
    if (c.type === 'custom') extra.type = 'custom';
    if (c.namespace) extra.namespace = c.namespace;
    let args: Json = {};
    if (typeof c.arguments === 'string') extra.arguments = c.arguments; // ATIF wants an object: the raw string is kept beside it
    else args = c.arguments;
    return { tool_call_id: c.id, function_name: c.namespace ? `${c.namespace}/${c.name}` : c.name, arguments: args, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
  });
  const results = s.observation.map((o) => {
    const own = callStep.get(o.toolCallId) === stepId;
    const extra: Json = { isError: o.isError, ...(o.details === undefined ? {} : { details: o.details }), ...(o.extra ?? {}), ...(own ? {} : { toolCallId: o.toolCallId }) };
    return { ...(own ? { source_call_id: o.toolCallId } : {}), content: messageOf(o.content, images), extra };
  });
  const m = s.metric;
  const step: Json = {
    step_id: stepId,
    source: 'agent',
    ...(s.started_at ? { timestamp: s.started_at } : {}),
    ...(m?.model ? { model_name: m.model } : {}),
    message: s.assistant_content.content,
    ...(s.assistant_content.reasoning_content !== null ? { reasoning_content: s.assistant_content.reasoning_content } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(results.length > 0 ? { observation: { results } } : {}),
    ...(m
      ? {
          metrics: {
            prompt_tokens: m.prompt_tokens_len,
            completion_tokens: m.completion_tokens_len,
            cached_tokens: m.cache_read_tokens_len ?? 0,
            ...(m.cost_usd !== null ? { cost_usd: m.cost_usd } : {}),
            ...tokenMetrics(s, tokens),
            extra: { cache_creation_tokens_len: m.cache_creation_tokens_len ?? 0, reasoning_tokens_len: m.reasoning_tokens_len ?? 0 },
          },
          llm_call_count: m.llm_call_count,
        }
      : {}),
    extra: { actf_step_id: s.step_id, finished_at: s.finished_at, stop_reason: s.stop_reason, ...(s.native_ids ? { native_ids: s.native_ids } : {}), ...(s.extra ?? {}) },
  };
  return step;
}

/**
 * ATIF's RL metrics (v1.3+) for a step made by one model call whose server returned its token ids: that call's
 * prompt and completion ids and per-token log-probabilities, found by the step's native response id.
 */
function tokenMetrics(s: ActfStep, tokens: StepTokens | undefined): Json {
  const id = s.native_ids?.response_id;
  const t = tokens && id && s.metric?.llm_call_count === 1 ? tokens(id) : undefined;
  if (!t) return {};
  return { prompt_token_ids: t.prompt, completion_token_ids: t.completion, ...(t.logprobs ? { logprobs: t.logprobs } : {}) };
}
