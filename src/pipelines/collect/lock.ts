import { isDeepStrictEqual } from 'node:util';
import { REDACTED, type Lock } from '../../schemas/lock.js';

const SENSITIVE = /(key|token|secret|password|passwd|credential|authorization|cookie|auth)/i;

/**
 * Model configuration as the lock keeps it (seeds/003 §5.1): values under credential-like keys become
 * <redacted>, URL userinfo and fragments are removed, sensitive query values replaced; everything else is
 * kept so that a change of model behaviour is a lock mismatch.
 */
export function redactConfig(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (SENSITIVE.test(key) && !/_env$|Env$/.test(key)) return REDACTED;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? redactUrl(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => redactConfig(v, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactConfig(v, k)]));
  return value;
}

export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    url.username = '';
    url.password = '';
    url.hash = '';
    for (const k of [...url.searchParams.keys()]) if (SENSITIVE.test(k)) url.searchParams.set(k, REDACTED);
    return url.toString();
  } catch {
    return text;
  }
}

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
