/**
 * What a client's request target may do to the forwarded request: contribute a path and a query, nothing else. The
 * upstream's origin is fixed by the proxy's configuration; a target that would name another host (absolute-form with
 * a host of its own is reduced to its path) or does not parse is refused (400), never followed.
 */
export interface UpstreamTarget {
  /** The configured upstream: `http(s)://host:port`, without userinfo. */
  readonly origin: string;
  /** Its path prefix without a trailing slash ('' for none). */
  readonly basePath: string;
  /** Its query parameters, added to every forwarded request (`a=1&b=2`, '' for none). */
  readonly query: string;
  /**
   * A path prefix the clients were given as part of their base URL that the upstream's own base already stands for
   * ('' for none): an OpenAI SDK pointed at `<proxy>/v1` asks for `/v1/chat/completions`, and an OpenAI-protocol
   * upstream configured as `https://host/api/v1` takes `/chat/completions` after it.
   */
  readonly clientBasePath: string;
  /** Non-secret headers added to (or replacing those of) every forwarded request, as configured. */
  readonly headers: readonly (readonly [string, string])[];
  /** Fields written into every Chat Completions request body (a model config's `token_ids`: vLLM's token fields). */
  readonly bodyFields: Readonly<Record<string, unknown>>;
}

/** What a proxy's upstream adds to every request besides its URL. */
export interface UpstreamExtras {
  clientBasePath?: string;
  headers?: Readonly<Record<string, string>>;
  bodyFields?: Readonly<Record<string, unknown>>;
}

export type TargetResult = { ok: true; path: string } | { ok: false; reason: string };

/** The upstream as configured (`--upstream`): its origin, path prefix and query, credentials kept apart. */
export function parseUpstream(url: string, extras: UpstreamExtras = {}): UpstreamTarget & { basicAuth: string | undefined } {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`the upstream must be an http or https URL, not ${u.protocol}`);
  const basicAuth = u.username || u.password ? Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64') : undefined;
  const clientBasePath = (extras.clientBasePath ?? '').replace(/\/+$/, '');
  if (clientBasePath !== '' && (!/^(\/[A-Za-z0-9._~-]+)+$/.test(clientBasePath) || clientBasePath.split('/').some((seg) => seg === '.' || seg === '..'))) throw new TypeError(`the client base path '${extras.clientBasePath}' must be /segment[/segment…]`);
  const headers = Object.entries(extras.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const);
  return { origin: u.origin, basePath: u.pathname.replace(/\/+$/, ''), query: u.search.slice(1), clientBasePath, headers, bodyFields: extras.bodyFields ?? {}, basicAuth };
}

/**
 * The path (and query) a request target asks for, as sent: origin-form (`/p?q`) as it is; absolute-form
 * (`http://any-host/p?q`) reduced to its path and query, whatever host it names. Anything else — `*`, authority-form,
 * bytes the URL parser refuses, a fragment — is refused.
 */
export function requestPath(target: string): TargetResult {
  let path = target;
  if (!target.startsWith('/')) {
    const scheme = /^https?:\/\//i.exec(target);
    if (!scheme) return { ok: false, reason: 'the request target is neither a path nor an http(s) URL' };
    if (!URL.canParse(target)) return { ok: false, reason: 'the request target does not parse as a URL' };
    const slash = target.indexOf('/', scheme[0].length);
    const query = target.indexOf('?', scheme[0].length);
    const start = slash === -1 ? query : query === -1 ? slash : Math.min(slash, query);
    path = start === -1 ? '/' : target[start] === '?' ? `/${target.slice(start)}` : target.slice(start);
  }
  if (path.includes('#')) return { ok: false, reason: 'the request target holds a fragment (#)' };
  // Only printable ASCII (RFC 9112 request targets): node's parser lets some bytes through that a URL would change.
  if (!/^[\x21-\x7e]*$/.test(path)) return { ok: false, reason: 'the request target holds bytes outside printable ASCII' };
  if (!URL.canParse(path, 'http://h')) return { ok: false, reason: 'the request target does not parse as a URL path' };
  // A dot segment (even percent-encoded) would climb out of the upstream's path prefix once the upstream resolves it.
  if (path.split('?')[0]!.split('/').some(isDotSegment)) return { ok: false, reason: "the request target holds a '.' or '..' segment, which could leave the upstream's path prefix" };
  return { ok: true, path };
}

function isDotSegment(segment: string): boolean {
  const s = segment.replace(/%2e/gi, '.');
  return s === '.' || s === '..';
}

/** The path to send upstream: the prefix, the client's path, and the upstream's own query parameters. */
export function upstreamPath(up: UpstreamTarget, path: string): string {
  const p = up.clientBasePath;
  const own = p !== '' && (path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}?`)) ? path.slice(p.length) || '/' : path;
  const full = up.basePath + (own.startsWith('?') ? `/${own}` : own);
  if (up.query === '') return full;
  return `${full}${full.includes('?') ? '&' : '?'}${up.query}`;
}

/** `path` with the values of credential-like query parameters replaced, for every place a path is written. */
export { redactPath } from '../../core/redaction.js';

/** An upstream URL as it may be printed: no userinfo or fragment, credential-like query values replaced. */
export { redactUrl as printableUpstream } from '../../core/redaction.js';
