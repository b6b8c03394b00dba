import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readCallsLazily } from '../sources/archive/calls-reader.js';
import { priceCall, sumPrices, type CallPrice, type SummedPrice } from '../transforms/cost/price-table.js';
import { addTo } from '../core/multimap.js';

export interface SamplePrices {
  /** Every call of the sample (its agents', compaction summaries', auxiliary calls'). */
  sample: SummedPrice;
  /** Each participant's own calls. */
  participants: Map<string, SummedPrice>;
}

const NONE: SummedPrice = { usd: null, reason: 'no captured calls to price (collect with --capture-calls)' };

/** A sample's calls priced from its published capture (calls.jsonl), by participant and in all. */
export async function samplePrices(sampleDir: string, capturePath: string | null | undefined): Promise<SamplePrices> {
  const file = capturePath ? join(sampleDir, capturePath, 'calls.jsonl') : null;
  if (!file || !existsSync(file)) return { sample: NONE, participants: new Map() };
  const all: CallPrice[] = [];
  const by = new Map<string, CallPrice[]>();
  for (const call of await readCallsLazily(file)) {
    const price = priceCall(call);
    all.push(price);
    if (call.participant_id) addTo(by, call.participant_id, price);
  }
  return { sample: sumPrices(all), participants: new Map([...by].map(([id, prices]) => [id, sumPrices(prices)])) };
}

export const participantPrice = (participant: string, prices: SamplePrices): SummedPrice => prices.participants.get(participant) ?? (prices.sample === NONE ? NONE : { usd: null, reason: 'no captured call of its own' });
