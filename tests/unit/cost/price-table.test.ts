/**
 * Calls priced from the maintained table (transforms/cost/price-table.ts) on calls real CLIs made here: the price is
 * the table's own rates applied to the call's tokens as the provider bills them (cache reads and writes at their
 * rates), a model the table lacks is unknown with the reason, and a sum is never partial.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import type { Call } from '../../../src/schemas/call.js';
import { costSource, PRICE_TABLE, PRICED, priceCall, sumPrices } from '../../../src/transforms/cost/price-table.js';
import { repoRoot } from '../../support/paths.js';

const calls = (rel: string) => readFileSync(join(repoRoot, 'tests/fixtures', rel), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);

describe('pricing calls', () => {
  it('an Anthropic call: input, cache reads, cache writes and output each at the rate the table gives its model', () => {
    const call = calls('claude-code/resume-2.1.332/calls.jsonl')[0]!;
    const model = call.response_model!;
    const withWrites = { ...call, usage: { ...call.usage, normalized: { ...call.usage.normalized!, cache_creation: 1200, cached_input: 3000 } } };
    const u = withWrites.usage.normalized;
    const rates = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId: 'anthropic' })!.model_price as Record<string, number>;
    const expected = (u.input * rates.input_mtok! + u.cached_input * rates.cache_read_mtok! + u.cache_creation * rates.cache_write_mtok! + u.output * rates.output_mtok!) / 1e6;
    const price = priceCall(withWrites);
    expect(price.reason).toBeNull();
    expect(price.usd).toBeCloseTo(expected, 12);
    expect(price.model).toBeTruthy();
  });

  it('a model the table does not have is unknown, with the reason; 1-hour cache writes are not guessed at', () => {
    const call = calls('codex/v2-run/calls.jsonl')[0]!;
    expect(priceCall({ ...call, response_model: 'scripted-nonexistent-model', request_model: null })).toEqual({ usd: null, model: null, reason: `model scripted-nonexistent-model is not in ${PRICE_TABLE}` });
    const claude = calls('claude-code/resume-2.1.332/calls.jsonl')[0]!;
    expect(priceCall({ ...claude, usage: { ...claude.usage, reported: { cache_creation: { ephemeral_1h_input_tokens: 10 } } } }).reason).toBe('1-hour cache writes are not priced apart');
    expect(priceCall({ ...claude, usage: { ...claude.usage, normalized: null } }).reason).toBe('no usage recorded');
  });

  it('a sum only when every call was priced; which cost to use', () => {
    expect(sumPrices([{ usd: 1, model: 'm', reason: null }, { usd: 2, model: 'm', reason: null }])).toEqual({ usd: 3, reason: null });
    expect(sumPrices([{ usd: 1, model: 'm', reason: null }, { usd: null, model: null, reason: 'x' }])).toEqual({ usd: null, reason: 'x' });
    expect(sumPrices([]).usd).toBeNull();
    expect(costSource(0.5, 0.4)).toBe('reported');
    expect(costSource(null, 0.4)).toBe(PRICED);
    expect(costSource(null, null)).toBe('unknown');
    expect(PRICED).toMatch(/^priced\(genai-prices@\d+\.\d+\.\d+\)$/);
  });
});
