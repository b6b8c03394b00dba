import type { UsageTotals } from '../schemas/common.js';

/**
 * A run's usage: its samples' totals summed, and partial when any sample's own totals are (seeds/004: an execution
 * total that leaves tokens out says so). collect and reprocess write the same figures.
 */
export function runUsageTotals(rows: readonly { path: string; usage: UsageTotals | null }[]): UsageTotals {
  const total = (k: 'input' | 'cached_input' | 'cache_creation' | 'output' | 'reasoning' | 'requests') => rows.reduce((a, r) => a + (r.usage?.[k] ?? 0), 0);
  const costs = rows.map((r) => r.usage?.cost_usd).filter((c): c is number => typeof c === 'number');
  const partialSamples = rows.filter((r) => r.usage?.partial).map((r) => r.path);
  // Priced in all only when every sample's calls were (a partial sum would pass for a total).
  const used = rows.filter((r) => r.usage !== null);
  const table = used.find((r) => r.usage?.price_table)?.usage?.price_table;
  const priced = used.length > 0 && used.every((r) => typeof r.usage?.priced_cost_usd === 'number') ? used.reduce((a, r) => a + r.usage!.priced_cost_usd!, 0) : null;
  return {
    input: total('input'),
    cached_input: total('cached_input'),
    cache_creation: total('cache_creation'),
    output: total('output'),
    reasoning: total('reasoning'),
    cost_usd: costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null,
    requests: total('requests'),
    ...(table ? { priced_cost_usd: priced, price_table: table } : {}),
    ...(partialSamples.length > 0 ? { partial: { missing: [], samples: partialSamples, reason: "these samples' totals leave tokens out (each sample's usage.partial says which participants and why)" } } : {}),
  };
}
