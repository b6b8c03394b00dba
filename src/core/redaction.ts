/**
 * The one place that decides what is a credential: header names, query and config key names, token-like values, and
 * the exact values a proxy forwarded (SecretMasker). Every writer that could meet a credential asks here.
 */

/** Written in place of a credential value in JSON documents (lock.json, info.json, cache traces). */
export const REDACTED = '<redacted>';
/** Written in place of a credential query value in a URL or path (URL-safe, so the path still parses). */
export const REDACTED_IN_URL = 'REDACTED';

/** Request and response headers whose values are credentials: forwarded where they must be, never written. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie', 'set-cookie']);

/** Words that make a name a credential's: `api_key`, `accessToken`, `X-Amz-Signature`, `key[]`, `pass`. */
const SECRET_WORDS = new Set([
  'key', 'keys', 'apikey', 'accesskey', 'secretkey', 'privatekey', 'token', 'tokens', 'accesstoken', 'apitoken', 'authtoken',
  'sessiontoken', 'refreshtoken', 'idtoken', 'sig', 'signature', 'secret', 'secrets', 'clientsecret', 'password', 'passwd',
  'pwd', 'pass', 'passphrase', 'auth', 'authorization', 'credential', 'credentials', 'jwt', 'hmac', 'cookie', 'bearer',
]);
/** In a URL's query these carry credentials too (an OAuth `code`, a `session` token); as config keys they name ids. */
const QUERY_SECRET_WORDS = new Set(['code', 'session']);

/** A name's words: split at `_ - . [ ] space` and at camelCase humps, lower-cased (`xApiKey` -> x, api, key). */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_.\-[\]]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/** A header or config key name whose value is a credential. */
function isSecretName(name: string): boolean {
  return nameWords(name).some((w) => SECRET_WORDS.has(w));
}

/** A query parameter whose value is a credential. */
export function isSecretQueryName(name: string): boolean {
  return nameWords(name).some((w) => SECRET_WORDS.has(w) || QUERY_SECRET_WORDS.has(w));
}

/** Config keys that name where a credential is (`api_key_env`), or an identity or cache slot, not a credential. */
const NOT_A_CREDENTIAL_KEY = /(_env|Env)$|^(session|cache|prompt[_-]?cache|message|idempotency)[_-]?key$|^max[_-]?(output[_-]?|completion[_-]?)?tokens$/i;

/** A config or event key whose string value is to be redacted. */
export function isSecretKey(key: string): boolean {
  return key !== '' && !NOT_A_CREDENTIAL_KEY.test(key) && isSecretName(key);
}

const KNOWN_PREFIXES = /^(sk|pk|rk)-[A-Za-z0-9_-]{8,}|^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|^github_pat_|^xox[abprs]-|^AKIA[0-9A-Z]{16}|^AIza[0-9A-Za-z_-]{30,}|^eyJ[A-Za-z0-9_-]{10,}\.|^(bearer|basic|token)\s+\S{8,}/i;

/** A value with a known token prefix (`sk-…`, `Bearer …`, GitHub, Slack, AWS, Google, a JWT). */
export function hasTokenPrefix(value: string): boolean {
  return KNOWN_PREFIXES.test(value.trim());
}

/**
 * A value that looks like a credential whatever its key is called: a known token prefix, or a run of 20+ letters and
 * digits with no separator, both kinds present and high entropy — a random token, where ids and model names are short
 * words between separators.
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

/** `path` (with its query) with the values of credential-named query parameters replaced, and any fragment removed. */
export function redactPath(path: string): string {
  const hash = path.indexOf('#');
  const bare = hash === -1 ? path : path.slice(0, hash);
  const q = bare.indexOf('?');
  if (q === -1) return bare;
  const params = bare.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: judged by its raw spelling
    }
    return eq !== -1 && isSecretQueryName(name) ? `${rawName}=${REDACTED_IN_URL}` : pair;
  });
  return `${bare.slice(0, q)}?${params.join('&')}`;
}

/** A URL as it may be printed or kept: no userinfo, no fragment, credential-named query values replaced. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.hash = '';
    return u.origin !== 'null' ? `${u.origin}${redactPath(u.pathname + u.search)}` : redactPath(u.href);
  } catch {
    return '(a URL that does not parse)';
  }
}

/** A string value that is a URL (`scheme://…`), to be kept through redactUrl. */
function isUrlLike(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

/** Strings under credential keys redacted, URLs through redactUrl, other strings that `isCredential` judges redacted. */
function redactWith(value: unknown, key: string, isCredential: (v: string) => boolean): unknown {
  if (typeof value === 'string') {
    if (isSecretKey(key)) return REDACTED;
    if (isUrlLike(value)) return redactUrl(value);
    return isCredential(value) ? REDACTED : value;
  }
  if (Array.isArray(value)) return value.map((v) => redactWith(v, key, isCredential));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactWith(v, k, isCredential)]));
  return value;
}

/**
 * Configuration as it may be written (lock.json): values under credential keys become <redacted>, URLs go through
 * redactUrl, and any string that looks like a credential whatever its key is redacted too.
 */
export function redactConfig(value: unknown, key = ''): unknown {
  return redactWith(value, key, looksLikeCredential);
}

/**
 * A harness's own diagnostics as a sample keeps them (OpenClaw's cache trace): values under credential keys, and
 * strings with a known token prefix, become <redacted>, URLs go through redactUrl; digests and text are kept (no
 * entropy rule here: a trace is full of hashes that are not secrets).
 */
export function redactCredentialValues(value: unknown, key = ''): unknown {
  return redactWith(value, key, hasTokenPrefix);
}
