import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { ContentBlock } from '../../schemas/content.js';
import { newStep } from '../../transforms/actf/step.js';
import { activeBranch } from './active-branch.js';
import { anthropicSystem, anthropicTools } from '../../transforms/protocols/anthropic-request.js';
import type { NativeRecord } from './native-session.js';

type Json = Record<string, any>;
type Content = string | ContentBlock[];

/** Text-only block lists become one string; anything else keeps its blocks (never dropped). */
function toContent(blocks: Json[], joiner = '\n\n'): Content {
  if (blocks.every((b) => b.type === 'text')) return blocks.map((b) => String(b.text ?? '')).join(joiner);
  return blocks as ContentBlock[];
}

function toolResultContent(content: unknown): Content {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return toContent(content as Json[], '\n');
  return '';
}

function appendUser(pending: Content | null, add: Content): Content {
  if (pending === null) return add;
  if (typeof pending === 'string' && typeof add === 'string') return `${pending}\n\n${add}`;
  const asBlocks = (c: Content): ContentBlock[] => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
  return [...asBlocks(pending), ...asBlocks(add)];
}

/** The system prompt and tools of the main participant's first captured Anthropic request. */
function fromWire(calls: readonly Call[] | undefined): { system: string; tools: Json[] } | undefined {
  const first = calls?.find((c) => c.protocol === 'anthropic-messages' && !c.native_identity.agent_id && c.context && typeof c.context === 'object');
  if (!first) return undefined;
  const body = first.context as Json;
  const system = anthropicSystem(body);
  const tools = anthropicTools(body);
  return { system, tools };
}

export interface ClaudeCodeActfOptions {
  /** Captured calls (roller.call/v1) of the same session: the source of system prompt and tools. */
  wire?: readonly Call[];
}

/**
 * ACTF of the main participant (seeds/003 §4.2). One step per assistant message: Claude Code writes one
 * record per content block, all sharing message.id, and they merge into one step whose usage is counted
 * once. Plaintext thinking goes to reasoning_content (redacted thinking stays in raw). Tool results are tied
 * to the step that made the call. Task-notification turns stay user input, wrapper and all. Sub-agent
 * records (sidechains) stay out: they have their own files and their own calls. After a rewind only the
 * branch that continued is converted (the dead branch stays in trace.jsonl).
 */
export function claudeCodeToActf(main: readonly NativeRecord[], options: ClaudeCodeActfOptions = {}): Actf {
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  let pendingUser: Content | null = null;
  let current: { step: ActfStep; messageId: string; text: Json[]; reasoning: string[] } | undefined;
  const derivedTools = new Map<string, Json>();
  let firstTs: string | null = null;
  let lastTs: string | null = null;

  const closeCurrent = () => {
    if (!current) return;
    current.step.assistant_content.content = toContent(current.text);
    current.step.assistant_content.reasoning_content = current.reasoning.length > 0 ? current.reasoning.join('\n\n') : null;
    current = undefined;
  };

  for (const { record } of activeBranch(main)) {
    if (record.isSidechain === true) continue;
    const ts = typeof record.timestamp === 'string' ? record.timestamp : null;
    if (ts && (record.type === 'user' || record.type === 'assistant')) {
      firstTs ??= ts;
      lastTs = ts;
    }
    if (record.type === 'assistant') {
      const m = record.message as Json;
      if (!current || current.messageId !== m.id) {
        closeCurrent();
        const step: ActfStep = {
          ...newStep(steps.length + 1, pendingUser, ts),
          native_ids: { message_id: m.id, ...(typeof record.requestId === 'string' ? { request_id: record.requestId } : {}) },
        };
        pendingUser = null;
        steps.push(step);
        current = { step, messageId: m.id, text: [], reasoning: [] };
      }
      const step = current.step;
      step.finished_at = ts ?? step.finished_at;
      step.stop_reason = typeof m.stop_reason === 'string' ? m.stop_reason : step.stop_reason;
      const u = (m.usage ?? {}) as Json;
      const num = (x: unknown) => (typeof x === 'number' && x >= 0 ? x : 0);
      step.metric = {
        prompt_tokens_len: num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens),
        completion_tokens_len: num(u.output_tokens),
        cache_read_tokens_len: num(u.cache_read_input_tokens),
        cache_creation_tokens_len: num(u.cache_creation_input_tokens),
        reasoning_tokens_len: num(u.output_tokens_details?.thinking_tokens),
        cost_usd: null,
        model: typeof m.model === 'string' ? m.model : null,
        llm_call_count: 1,
      };
      for (const b of m.content as Json[]) {
        if (b.type === 'thinking') current.reasoning.push(String(b.thinking ?? ''));
        else if (b.type === 'redacted_thinking') continue; // ciphertext: kept in raw, never converted
        else if (b.type === 'tool_use') {
          step.assistant_content.tool_calls.push({ id: b.id, name: b.name, type: 'function', arguments: (b.input ?? {}) as Record<string, unknown> });
          stepOfCall.set(b.id, step);
          if (!derivedTools.has(b.name)) derivedTools.set(b.name, { type: 'function', function: { name: b.name, parameters: { type: 'object', additionalProperties: true } } });
        } else current.text.push(b);
      }
    } else if (record.type === 'user') {
      const content = record.message.content as string | Json[];
      if (typeof content === 'string') {
        closeCurrent();
        pendingUser = appendUser(pendingUser, content);
        continue;
      }
      const other: Json[] = [];
      for (const b of content) {
        if (b.type !== 'tool_result') {
          other.push(b);
          continue;
        }
        const owner = stepOfCall.get(b.tool_use_id) ?? steps.at(-1);
        owner?.observation.push({
          toolCallId: b.tool_use_id,
          content: toolResultContent(b.content),
          isError: b.is_error === true,
          ...(record.toolUseResult !== undefined ? { details: record.toolUseResult } : {}),
        });
      }
      if (other.length > 0) {
        closeCurrent();
        pendingUser = appendUser(pendingUser, toContent(other));
      }
    }
  }
  closeCurrent();

  const wire = fromWire(options.wire);
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: wire?.system ?? '',
    system_prompt_source: wire ? 'wire' : 'none',
    tools: wire ? (wire.tools as Actf['tools']) : ([...derivedTools.values()] as Actf['tools']),
    tools_source: wire ? 'wire' : 'native_derived',
    steps,
    timing: {
      started_at: firstTs,
      finished_at: lastTs,
      duration_ms: firstTs && lastTs ? Math.max(0, Date.parse(lastTs) - Date.parse(firstTs)) : null,
    },
  };
}
