import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import type { Call } from '../../schemas/call.js';

const require = createRequire(import.meta.url);
const version = (JSON.parse(readFileSync(join(dirname(require.resolve('@pydantic/genai-prices')), '..', 'package.json'), 'utf8')) as { version: string }).version;

/** The price table roller prices tokens from: Pydantic's maintained genai-prices data, as bundled in its npm package. */
export const PRICE_TABLE = `genai-prices@${version}`;
export const PRICED = `priced(${PRICE_TABLE})`;

export interface CallPrice {
  /** null: the call could not be priced (reason says why). */
  usd: number | null;
  /** The table's model the call's model matched (null when none did). */
  model: string | null;
  reason: string | null;
}

type PricedCall = Pick<Call, 'protocol' | 'request_model' | 'response_model' | 'started_at' | 'usage'>;

/**
 * One call's price from its recorded usage and the model that answered it, at the time it was made, as the provider
 * bills: cache reads at their rate, cache writes at theirs (the table's input_tokens is every input token). Anthropic's
 * 1-hour cache writes, which the normalized usage does not count apart, leave the call unpriced rather than guessed.
 */
export function priceCall(call: PricedCall): CallPrice {
  const model = call.response_model ?? call.request_model;
  const u = call.usage.normalized;
  if (!model) return { usd: null, model: null, reason: 'no model recorded' };
  if (!u) return { usd: null, model: null, reason: 'no usage recorded' };
  const reported = call.usage.reported as { cache_creation?: { ephemeral_1h_input_tokens?: number } } | null;
  if ((reported?.cache_creation?.ephemeral_1h_input_tokens ?? 0) > 0) return { usd: null, model: null, reason: '1-hour cache writes are not priced apart' };
  const usage = { input_tokens: u.input + u.cached_input + u.cache_creation, cache_read_tokens: u.cached_input, cache_write_tokens: u.cache_creation, output_tokens: u.output };
  const options = { timestamp: new Date(call.started_at), ...(call.protocol === 'anthropic-messages' ? { providerId: 'anthropic' } : {}) };
  const found = calcPrice(usage, model, options);
  if (!found) return { usd: null, model: null, reason: `model ${model} is not in ${PRICE_TABLE}` };
  return { usd: found.total_price, model: found.model.id, reason: null };
}

export interface SummedPrice {
  usd: number | null;
  reason: string | null;
}

/** Calls' prices summed: a sum only when every one was priced (else the first reason), never a partial total. */
export function sumPrices(prices: readonly CallPrice[]): SummedPrice {
  if (prices.length === 0) return { usd: null, reason: 'no captured calls to price' };
  const unpriced = prices.find((p) => p.usd === null);
  if (unpriced) return { usd: null, reason: unpriced.reason };
  return { usd: prices.reduce((a, p) => a + p.usd!, 0), reason: null };
}

/** Which cost a reader should take: the one the harness reported, else the priced one, else none. */
export const costSource = (reported: number | null | undefined, priced: number | null): string => (reported !== null && reported !== undefined ? 'reported' : priced !== null ? PRICED : 'unknown');

/** A sample's model is the embedded scripted model (`scripted/<name>`): no real model, so nothing it answers costs. */
export const isScriptedModel = (modelId: string): boolean => modelId.startsWith('scripted/');
