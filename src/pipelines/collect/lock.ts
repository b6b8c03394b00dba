import { isDeepStrictEqual } from 'node:util';
import { REDACTED, type Lock } from '../../schemas/lock.js';

const SENSITIVE = /(key|token|secret|password|passwd|credential|authorization|cookie|auth)/i;

const KNOWN_PREFIXES = /^(sk|pk|rk)-[A-Za-z0-9_-]{8,}|^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|^github_pat_|^xox[abprs]-|^AKIA[0-9A-Z]{16}|^AIza[0-9A-Za-z_-]{30,}|^eyJ[A-Za-z0-9_-]{10,}\.|^(bearer|basic|token)\s+\S{8,}/i;

/**
 * A value that looks like a credential whatever its key is called: a known token prefix (`sk-…`, `Bearer …`, GitHub,
 * Slack, AWS, Google, a JWT), or a run of 20+ letters and digits with no separator, both kinds present and high
 * entropy — a random token, where ids and model names are short words between separators.
 */
export function looksLikeCredential(value: string): boolean {
  const v = value.trim();
  if (KNOWN_PREFIXES.test(v)) return true;
  for (const run of v.match(/[A-Za-z0-9+=]{20,}/g) ?? []) {
    if (/[A-Za-z]/.test(run) && /[0-9]/.test(run) && entropyBitsPerChar(run) >= 3.5) return true;
  }
  return false;
}

function entropyBitsPerChar(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/**
 * Model configuration as the lock keeps it (seeds/003 §5.1): values under credential-like keys become
 * <redacted>, URL userinfo and fragments are removed, sensitive query values replaced; everything else is
 * kept so that a change of model behaviour is a lock mismatch.
 */
export function redactConfig(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (SENSITIVE.test(key) && !/_env$|Env$/.test(key)) return REDACTED;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactUrl(value);
    return looksLikeCredential(value) ? REDACTED : value;
  }
  if (Array.isArray(value)) return value.map((v) => redactConfig(v, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactConfig(v, k)]));
  return value;
}

/** Keys that name an identity or a cache slot, not a credential (OpenClaw's sessionKey is how its sessions are joined). */
const IDENTITY_KEYS = /^(session|cache|prompt[_-]?cache|message|idempotency)[_-]?key$/i;

/**
 * A harness's own diagnostics as a sample keeps them (OpenClaw's cache trace): values under credential-like keys, and
 * strings with a known token prefix, become <redacted>, URLs lose their userinfo; digests and text are kept (no
 * entropy rule here: a trace is full of hashes that are not secrets).
 */
export function redactCredentialValues(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (SENSITIVE.test(key) && !/_env$|Env$/.test(key) && !IDENTITY_KEYS.test(key)) return REDACTED;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactUrl(value);
    return KNOWN_PREFIXES.test(value.trim()) ? REDACTED : value;
  }
  if (Array.isArray(value)) return value.map((v) => redactCredentialValues(v, key));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactCredentialValues(v, k)]));
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
