import { compareReleases } from '../release.js';

type Json = Record<string, any>;
const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/** The first release of the matrix whose stored output leaves the reasoning out (1.3.2 and before keep it in). */
const OUTPUT_WITHOUT_REASONING_SINCE = '1.14.34';

/**
 * A message's output tokens as the wire counts them (reasoning included), from what the release stored: up to 1.3.2
 * its `tokens.output` holds the reasoning (46 stored for a completion of 46 with 6 reasoning), from 1.14.34 on it
 * does not (40 stored for 46 with 6) and the reasoning is added back. null: the session names no release and the
 * message reasoned, so which it is cannot be told.
 */
export function wireOutput(tokens: Json, version: string | null): number | null {
  const output = n(tokens.output);
  const reasoning = n(tokens.reasoning);
  if (reasoning === 0) return output;
  if (version === null) return null;
  return compareReleases(version, OUTPUT_WITHOUT_REASONING_SINCE) >= 0 ? output + reasoning : output;
}

/** The release a session row names (OpenCode writes its version on each session). */
export const sessionVersion = (row: Json): string | null => (typeof row.version === 'string' && /^\d+\.\d+\.\d+/.test(row.version) ? row.version : null);
