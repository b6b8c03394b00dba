import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../../core/atomic-write.js';
import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import type { NormalizedUsage, RecordedError, UsageTotals } from '../../schemas/common.js';
import {
  CONVERSATION_SCHEMA,
  USER_SIMULATOR_EVENTS_SCHEMA,
  USER_SIMULATOR_INFO_SCHEMA,
  type Conversation,
  type UserSimulatorEvent,
  type UserSimulatorInfo,
} from '../../schemas/dialogue.js';
import { timingOf } from '../../transforms/actf/step.js';
import { withoutReasoning } from '../../transforms/actf/without-reasoning.js';
import { projectSft } from '../../transforms/sft/project.js';
import type { UserSimulator } from './user-simulator.js';
import { ErrorCode } from '../../core/errors.js';

import { USER_SIMULATOR_DIR } from '../sample-layout.js';

export { USER_SIMULATOR_DIR };

interface CallUsage {
  response_id: string | null;
  usage: { normalized: NormalizedUsage | null };
  response_model: string | null;
}

/** The simulator's calls as the recording proxy kept them (a cut last line is left out: the projection was stopped). */
async function readCalls(path: string): Promise<CallUsage[]> {
  if (!existsSync(path)) return [];
  const calls: CallUsage[] = [];
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    try {
      calls.push(JSON.parse(line) as CallUsage);
    } catch {
      // a cut line: that call has no usage to add
    }
  }
  return calls;
}

type Request = Extract<UserSimulatorEvent, { type: 'request' }>;
type ChatAnswer = { id?: string; model?: string; choices?: { message?: { content?: string; reasoning_content?: string }; finish_reason?: string }[] };

/**
 * The simulator's ACTF from its client events: each answered request a step whose user input is the Task Agent reply
 * it read and whose assistant content is its answer; tokens from the proxy's call record of that response id.
 */
export function simulatorActf(system: string, events: readonly UserSimulatorEvent[], calls: readonly CallUsage[]): Actf {
  const steps: ActfStep[] = [];
  const byResponse = new Map(calls.filter((c) => c.response_id).map((c) => [c.response_id!, c]));
  let request: Request | undefined;
  for (const e of events) {
    if (e.type === 'request') request = e;
    if (e.type !== 'response' || e.error || !request) continue;
    const sent = (request.body as { messages: { role: string; content: string }[] }).messages;
    const answer = e.body as ChatAnswer;
    const choice = answer.choices?.[0];
    const usage = answer.id ? byResponse.get(answer.id)?.usage.normalized : undefined;
    steps.push({
      step_id: steps.length + 1,
      user_content: sent.at(-1)?.content ?? '',
      assistant_content: { reasoning_content: choice?.message?.reasoning_content ?? null, content: choice?.message?.content ?? '', tool_calls: [] },
      observation: [],
      metric: usage
        ? {
            prompt_tokens_len: usage.input + usage.cached_input + usage.cache_creation,
            completion_tokens_len: usage.output,
            cache_read_tokens_len: usage.cached_input,
            cache_creation_tokens_len: usage.cache_creation,
            reasoning_tokens_len: usage.reasoning,
            cost_usd: null,
            model: answer.model ?? null,
            llm_call_count: 1,
          }
        : null,
      started_at: request.at,
      finished_at: e.at,
      stop_reason: choice?.finish_reason ?? null,
      ...(answer.id ? { native_ids: { response_id: answer.id } } : {}),
    });
  }
  return { schema_version: ACTF_SCHEMA_VERSION, system_prompt: system, system_prompt_source: 'wire', tools: [], tools_source: 'wire', steps, timing: timingOf(steps) };
}

function usageOf(calls: readonly CallUsage[]): UsageTotals {
  const sum = (k: keyof NormalizedUsage) => calls.reduce((a, c) => a + (c.usage.normalized?.[k] ?? 0), 0);
  const unknown = calls.filter((c) => !c.usage.normalized).length;
  return {
    input: sum('input'),
    cached_input: sum('cached_input'),
    cache_creation: sum('cache_creation'),
    output: sum('output'),
    reasoning: sum('reasoning'),
    cost_usd: null,
    requests: calls.length,
    ...(unknown > 0 ? { partial: { missing: [], tokens_unknown: ['user_simulator'], reason: `${unknown} simulator call(s) carry no usage` } } : {}),
  };
}

/**
 * user_simulator/ (its trace.jsonl, calls.jsonl, ACTF, SFT when it succeeded, info.json) and the root conversation.json.
 * Returns the simulator's info for the root info.json.
 */
export async function writeDialogueFiles(
  sampleDir: string,
  sim: UserSimulator,
  options: { keepThinking: boolean; error: RecordedError | null; taskAgentModel: string },
): Promise<UserSimulatorInfo> {
  const dir = join(sampleDir, USER_SIMULATOR_DIR);
  await mkdir(dir, { recursive: true });
  const termination = sim.termination ?? { reason: 'task_agent_failed' as const, after_turn: Math.max(...sim.turns.map((t) => t.turn)), detail: 'the attempt ended before the dialogue did' };
  await writeFileAtomic(join(dir, 'trace.jsonl'), sim.events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  const calls = await readCalls(join(sim.captureDir, 'calls.jsonl'));
  if (existsSync(join(sim.captureDir, 'calls.jsonl'))) await copyFile(join(sim.captureDir, 'calls.jsonl'), join(dir, 'calls.jsonl'));
  let actf = simulatorActf(sim.systemPrompt, sim.events, calls);
  if (!options.keepThinking) actf = withoutReasoning(actf);
  await writeJsonAtomic(join(dir, 'trace_ACTF.json'), actf);
  const sft = options.error ? null : projectSft(actf, { keepThinking: options.keepThinking });
  if (sft?.status === 'ok') await writeJsonAtomic(join(dir, 'trace_SFT.json'), sft.record);
  const error = options.error ?? (sft && sft.status !== 'ok' ? { code: ErrorCode.CONVERSION_INVALID, message: `the simulator's SFT: ${sft.reason}`, at: new Date().toISOString() } : null);
  const info: UserSimulatorInfo = {
    schema: USER_SIMULATOR_INFO_SCHEMA,
    status: error ? 'error' : 'ok',
    error,
    model: sim.model.id,
    messages: sim.answers,
    termination,
    usage: usageOf(calls),
    trajectory: { raw_schema: USER_SIMULATOR_EVENTS_SCHEMA, raw: 'trace.jsonl', actf: 'trace_ACTF.json', sft: sft?.status === 'ok' ? 'trace_SFT.json' : null, calls: existsSync(join(dir, 'calls.jsonl')) ? 'calls.jsonl' : null },
  };
  await writeJsonAtomic(join(dir, 'info.json'), info);
  const finished = new Date().toISOString();
  const conversation: Conversation = {
    schema: CONVERSATION_SCHEMA,
    turns: sim.turns,
    termination,
    pending_instructions: sim.pending,
    models: { task_agent: options.taskAgentModel, user_simulator: sim.model.id },
    timing: { started_at: sim.startedAt, finished_at: finished, duration_ms: Math.max(0, Date.parse(finished) - Date.parse(sim.startedAt)) },
  };
  await writeJsonAtomic(join(sampleDir, 'conversation.json'), conversation);
  return info;
}
