import { isDeepStrictEqual } from 'node:util';
import type { Lock } from '../../schemas/lock.js';

export { looksLikeCredential, redactConfig, redactCredentialValues, redactUrl } from '../../core/redaction.js';

/** The paths where two locks differ (at most `limit`), ignoring when they were written and by which roller. */
export function lockDifferences(old: Lock, now: Lock, limit = 10): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (out.length >= limit || isDeepStrictEqual(a, b)) return;
    if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) === !Array.isArray(b)) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const k of keys) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
      return;
    }
    out.push(`${path}: ${JSON.stringify(a) ?? 'absent'} -> ${JSON.stringify(b) ?? 'absent'}`);
  };
  const { created_at: _a, roller_version: _b, ...o } = old;
  const { created_at: _c, roller_version: _d, ...n } = now;
  walk(o, n, '$');
  return out;
}
