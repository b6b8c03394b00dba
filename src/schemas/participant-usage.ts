import { z } from 'zod';
import { ParticipantStatus, Resumption, SpawnStatus } from './manifest.js';
import type { UsagePartial } from './common.js';

/** Tokens by kind: input excludes cache reads and cache creation, which are counted apart; reasoning is within output. */
export const TokensByKind = z.strictObject({
  input: z.number().nonnegative(),
  cache_creation: z.number().nonnegative(),
  cache_read: z.number().nonnegative(),
  output: z.number().nonnegative(),
  reasoning: z.number().nonnegative(),
});
export type TokensByKind = z.infer<typeof TokensByKind>;

/**
 * One participant of a native session as an adapter reads it (seeds/004): its place in the agent tree, its own
 * tokens (each model message counted once), its status and where that was read. The cross-harness participant
 * model: usage.json rows, info.json runtime.participants, and what the capture layer attributes calls to.
 */
export const ParticipantUsage = z
  .strictObject({
    participant: z.string().min(1).describe('opaque participant id (session:…, agent:…, thread:…)'),
    role: z.enum(['root', 'child']),
    native_id: z.string().describe('the id the harness gives it'),
    parent: z.string().nullable().describe('the parent participant, null for the root (or when unknown: see reason)'),
    spawn_tool_call_id: z.string().nullable().describe('the tool call that spawned it'),
    depth: z.number().int(),
    tokens: TokensByKind,
    tokens_status: z
      .enum(['exact', 'unknown'])
      .optional()
      .describe("absent or exact: every model message counted with its final usage; unknown: some of its messages carry no final count where they were read (tokens_note says which), so `tokens` is not its true count"),
    unknown_kinds: z
      .array(z.enum(['input', 'cache_creation', 'cache_read', 'output', 'reasoning']))
      .optional()
      .describe("token kinds the harness's records do not count, or count differently by release (Pi: reasoning, and output where the model reasoned): their value in tokens is not the true count (tokens_note says why)"),
    tokens_note: z.string().optional().describe('where the counts came from when not all from the native records, or why they are unknown'),
    messages: z.number().int().nonnegative().describe('distinct model messages (each counted once)'),
    message_ids: z.array(z.string()).describe('the native output ids (response / message ids) calls join on'),
    status: ParticipantStatus,
    status_source: z.string().nullable(),
    status_meaning: z
      .enum(['last_observed_turn'])
      .optional()
      .describe("last_observed_turn: the harness writes no terminal record (Codex), so status is its last observed turn outcome, not an end (seeds/004 subagent.statusMeaning)"),
    replayed_records_skipped: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("a forked child: the parent's records its file replays first, left out of its text, time and tokens (seeds/004 subagent.replayedRecordsSkipped)"),
    cost_usd: z.number().nullable(),
    cost_note: z.string().nullable(),
    reason: z.string().nullable(),
    spawn_result: z
      .enum(['result', 'acknowledgement'])
      .nullable()
      .optional()
      .describe("what the spawn call's own tool result was: the child's result (foreground) or a launch acknowledgement (background; every Codex spawn), which is never completion"),
    resumed_by: z
      .array(Resumption)
      .optional()
      .describe("later delegations that resumed it (Claude Code: SendMessage to a finished agent), in order, each judged by its own tool id; with them, status is the last one's"),
    spawn_status: SpawnStatus.optional(),
  })
  .describe('a participant with its own usage (usage.json, info.json runtime.participants)');
export type ParticipantUsage = z.infer<typeof ParticipantUsage>;

/** A spawn call that produced no participant (seeds/004): refused or failed, or its child's records not read. */
export interface SpawnWithoutParticipant {
  /** The participant that made the call. */
  participant: string;
  tool_call_id: string;
  /** What the spawn output named: a thread id (Codex v1) or an agent path (v2), when it named one. */
  target: string | null;
  status: 'not_collected' | 'failed';
  reason: string;
  /** file:line of the evidence. */
  source: string;
}

/** What totals summed over these participants leave out (seeds/004: a spawn or a child's count missing), or nothing. */
export function partialUsage(participants: readonly ParticipantUsage[]): UsagePartial | undefined {
  const missing = participants.filter((p) => p.status === 'missing');
  const unknown = participants.filter((p) => p.status !== 'missing' && p.tokens_status === 'unknown');
  if (missing.length + unknown.length === 0) return undefined;
  return {
    missing: missing.map((p) => p.participant),
    ...(unknown.length > 0 ? { tokens_unknown: unknown.map((p) => p.participant) } : {}),
    reason: [
      ...(missing.length > 0 ? ['participants named by their parent have no records: their tokens are unknown and not in any total'] : []),
      ...(unknown.length > 0 ? ['participants whose records carry no final token count: their totals are not their true counts (tokens_note)'] : []),
    ].join('; '),
  };
}

export const zeroTokens = (): TokensByKind => ({ input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 });

const TOKEN_KINDS = ['input', 'cache_creation', 'cache_read', 'output', 'reasoning'] as const satisfies readonly (keyof TokensByKind)[];

/** Adds b's tokens to a's, kind by kind (a may carry other counts: they are left alone). */
export function addTokens(a: TokensByKind, b: TokensByKind): void {
  for (const k of TOKEN_KINDS) a[k] += b[k] ?? 0;
}
