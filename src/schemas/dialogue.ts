import { z } from 'zod';
import { IsoTimestamp, NonNegativeInt, RecordedError, UsageTotals } from './common.js';

export const CONVERSATION_SCHEMA = 'roller.conversation/v1';
export const USER_SIMULATOR_INFO_SCHEMA = 'roller.user-simulator-info/v1';
export const USER_SIMULATOR_EVENTS_SCHEMA = 'roller.user-simulator-events/v1';

/** Why a simulated dialogue ended (seeds/003 §2.3 stop rules). */
export const TerminationReason = z
  .enum(['simulator_stop', 'max_turns', 'task_agent_failed', 'simulator_failed'])
  .describe('simulator_stop: the simulator answered its stop marker; max_turns: the limit was reached; the others: that participant failed');

export const DialogueTermination = z.strictObject({
  reason: TerminationReason,
  after_turn: NonNegativeInt.describe('Task Agent turns that ran (the first prompt is turn 1)'),
  detail: z.string().nullable(),
});
export type DialogueTermination = z.infer<typeof DialogueTermination>;

export const VisibleTurn = z.strictObject({
  role: z.enum(['user', 'assistant']),
  text: z.string(),
  source: z.enum(['task', 'user_simulator', 'task_agent']).describe('task: the task prompt; user_simulator: a simulated user message; task_agent: the harness reply the user saw'),
  turn: z.number().int().positive().describe('the Task Agent turn this message opens (user) or ends (assistant)'),
  at: IsoTimestamp,
});
export type VisibleTurn = z.infer<typeof VisibleTurn>;

export const Conversation = z
  .strictObject({
    schema: z.literal(CONVERSATION_SCHEMA),
    turns: z.array(VisibleTurn).describe('what both sides saw: user messages and the replies, no reasoning, tool calls or tool results'),
    termination: DialogueTermination,
    pending_instructions: z.array(z.string()).describe('simulator messages never delivered to the Task Agent'),
    models: z.strictObject({ task_agent: z.string(), user_simulator: z.string() }),
    timing: z.strictObject({ started_at: IsoTimestamp, finished_at: IsoTimestamp, duration_ms: NonNegativeInt }),
  })
  .superRefine((c, ctx) => {
    c.turns.forEach((t, i) => {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      if (t.role !== role) ctx.addIssue({ code: 'custom', path: ['turns', i, 'role'], message: `expected ${role}: the turns alternate, user first` });
    });
  })
  .describe('conversation.json: the visible dialogue of a user-simulator task (seeds/003 §5.8)');
export type Conversation = z.infer<typeof Conversation>;

export const UserSimulatorInfo = z
  .strictObject({
    schema: z.literal(USER_SIMULATOR_INFO_SCHEMA),
    status: z.enum(['ok', 'error']),
    error: RecordedError.nullable(),
    model: z.string(),
    messages: NonNegativeInt.describe('answers the simulator gave (its stop included)'),
    termination: DialogueTermination,
    usage: UsageTotals,
    trajectory: z.strictObject({
      raw_schema: z.literal(USER_SIMULATOR_EVENTS_SCHEMA),
      raw: z.string(),
      actf: z.string().nullable(),
      sft: z.string().nullable(),
      calls: z.string().nullable().describe("the simulator's calls as the recording proxy kept them"),
    }),
  })
  .describe('user_simulator/info.json: the simulator participant of a dialogue');
export type UserSimulatorInfo = z.infer<typeof UserSimulatorInfo>;

/** One line of user_simulator/trace.jsonl: what roller's simulator client sent and received. */
export const UserSimulatorEvent = z.discriminatedUnion('type', [
  z.strictObject({
    schema: z.literal(USER_SIMULATOR_EVENTS_SCHEMA),
    type: z.literal('session'),
    at: IsoTimestamp,
    model: z.string(),
    instructions: z.string(),
    stop: z.string(),
    max_turns: z.number().int().positive(),
  }),
  z.strictObject({ schema: z.literal(USER_SIMULATOR_EVENTS_SCHEMA), type: z.literal('request'), at: IsoTimestamp, turn: z.number().int().positive(), path: z.string(), body: z.unknown() }),
  z.strictObject({
    schema: z.literal(USER_SIMULATOR_EVENTS_SCHEMA),
    type: z.literal('response'),
    at: IsoTimestamp,
    turn: z.number().int().positive(),
    http_status: z.number().int().nullable(),
    body: z.unknown(),
    error: RecordedError.nullable(),
  }),
  z.strictObject({ schema: z.literal(USER_SIMULATOR_EVENTS_SCHEMA), type: z.literal('termination'), at: IsoTimestamp, termination: DialogueTermination }),
]);
export type UserSimulatorEvent = z.infer<typeof UserSimulatorEvent>;
