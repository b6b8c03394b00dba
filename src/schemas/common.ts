import { z } from 'zod';

/** An ISO-8601 timestamp with a time zone (what roller writes; `Z` or an offset). */
export const IsoTimestamp = z.iso.datetime({ offset: true }).describe('ISO-8601 timestamp with time zone');

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters').describe('sha256, hex');

export const NonNegativeInt = z.number().int().nonnegative();

/** Token counts normalised across providers; cached_input is a subset of nothing: input excludes cache. */
export const NormalizedUsage = z
  .strictObject({
    input: NonNegativeInt.describe('input tokens, excluding cache reads and cache creation'),
    cached_input: NonNegativeInt.describe('input tokens read from the prompt cache'),
    cache_creation: NonNegativeInt.describe('input tokens written to the prompt cache'),
    output: NonNegativeInt.describe('output tokens, including reasoning'),
    reasoning: NonNegativeInt.describe('reasoning tokens, a subset of output where reported'),
  })
  .describe('usage normalised across protocols');
export type NormalizedUsage = z.infer<typeof NormalizedUsage>;

/** Set when totals leave some tokens out (seeds/004): the sums are of what is known, never a silent zero. */
export const UsagePartial = z.strictObject({
  missing: z.array(z.string()).describe('participants a parent names whose own records are not there'),
  tokens_unknown: z.array(z.string()).optional().describe('participants whose records carry no final token count'),
  samples: z.array(z.string()).optional().describe('run totals: the samples whose own totals are partial'),
  reason: z.string(),
});
export type UsagePartial = z.infer<typeof UsagePartial>;

/** A cost priced from the calls' tokens and a maintained price table, beside (never instead of) a reported one. */
export const PricedCost = z.strictObject({
  priced_cost_usd: z.number().nonnegative().nullable().optional().describe("the calls' tokens priced by price_table at the time of each call (every call priced, or null)"),
  cost_source: z.string().optional().describe("which cost to use: 'reported' (cost_usd), 'priced(<table>@<version>)' (priced_cost_usd), 'scripted' (the embedded scripted model answered: both 0) or 'unknown'"),
  price_table: z.string().optional().describe('the price table and its version, e.g. genai-prices@0.1.8'),
  priced_cost_note: z.string().optional().describe('why priced_cost_usd is null (or 0, for the scripted model)'),
});

export const UsageTotals = NormalizedUsage.extend({
  cost_usd: z.number().nonnegative().nullable().describe('cost reported by the harness or provider; null when none was reported'),
  requests: NonNegativeInt.describe('HTTP model requests'),
  partial: UsagePartial.optional(),
  ...PricedCost.shape,
});
export type UsageTotals = z.infer<typeof UsageTotals>;

/** A captured error: a stable code and a message for people. */
export const RecordedError = z.strictObject({
  code: z.string().min(1),
  message: z.string(),
  at: IsoTimestamp.optional(),
});
export type RecordedError = z.infer<typeof RecordedError>;

export const FileDigest = z.strictObject({ sha256: Sha256, bytes: NonNegativeInt });

/** The harnesses roller ships adapters for; a user's own adapter (registerHarness) may name another. */
export const KNOWN_HARNESSES = ['claude-code', 'codex', 'opencode', 'pi', 'openclaw', 'hermes', 'deepseek'] as const;
export const HarnessName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,63}$/, 'a harness name: lowercase letters, digits and "-"')
  .describe(`the harness adapter's name: ${KNOWN_HARNESSES.join(', ')}, or a registered adapter of a user's own`);
export type HarnessName = z.infer<typeof HarnessName>;

export const SampleStatus = z.enum(['ok', 'error', 'timeout', 'skipped']);
export type SampleStatus = z.infer<typeof SampleStatus>;
