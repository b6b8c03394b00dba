import { util as undiciUtil } from 'undici';
import type { RecordedResponseHead } from './frame-json.js';

/** Credentials: their values are never written anywhere (they are forwarded, never recorded). */
export const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization', 'api-key', 'x-goog-api-key']);

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'expect']);

/** Harness identity headers: forwarded unchanged, their values recorded as native identity. */
const HARNESS_IDENTITY: Record<string, keyof NativeIdentityHeaders> = {
  'x-claude-code-session-id': 'session_id',
  'x-claude-code-agent-id': 'agent_id',
  'session-id': 'session_id',
  'thread-id': 'thread_id',
  'x-session-id': 'session_id',
};

/** roller's own headers: removed before forwarding, their values recorded. */
const ROLLER_IDENTITY: Record<string, keyof NativeIdentityHeaders> = {
  'x-roller-run-id': 'run_id',
  'x-roller-session-id': 'session_id',
  'x-roller-thread-id': 'thread_id',
  'x-roller-agent-id': 'agent_id',
};

export interface NativeIdentityHeaders {
  run_id?: string;
  session_id?: string;
  thread_id?: string;
  agent_id?: string;
}

export interface SplitHeaders {
  /** Name, value, name, value, … as received (names in their case), for undici's dispatch. */
  forward: string[];
  identity: NativeIdentityHeaders;
  /** Names (never values, lower case) of the headers removed before forwarding. */
  dropped: string[];
  contentEncoding?: string;
}

/** An x-roller-* header roller does not know: removed, nothing recorded. */
const UNKNOWN_ROLLER_HEADER: RequestHeaderRole = { kind: 'drop', key: undefined };

/** Connection tokens that name no header. */
const CONNECTION_OPTIONS = new Set(['keep-alive', 'close', 'upgrade']);

/** What a request header is to the proxy when it is not simply forwarded. */
type RequestHeaderRole =
  | { readonly kind: 'hop' }
  /** Removed before forwarding (roller's own, a configured correlation header), its value recorded as `key`. */
  | { readonly kind: 'drop'; readonly key: keyof NativeIdentityHeaders | undefined }
  /** Forwarded, its value recorded as `key` (a harness's identity header). */
  | { readonly kind: 'identity'; readonly key: keyof NativeIdentityHeaders }
  | { readonly kind: 'content-encoding' };

const HOP_ROLE: RequestHeaderRole = { kind: 'hop' };
const NO_CORRELATION: Readonly<Record<string, keyof NativeIdentityHeaders>> = {};
const rolesByCorrelation = new WeakMap<object, Map<string, RequestHeaderRole>>();

/**
 * Every header name the proxy treats specially, given the proxy's correlation headers, in one map (built once per
 * correlation table): one lookup per header instead of a set, a prefix test and three lookups by a name that varies.
 * Precedence as the checks ran before: hop-by-hop, then removed (x-roller-*, correlation), then harness identity.
 */
function requestHeaderRoles(correlation: Readonly<Record<string, keyof NativeIdentityHeaders>>): Map<string, RequestHeaderRole> {
  let roles = rolesByCorrelation.get(correlation);
  if (roles) return roles;
  roles = new Map<string, RequestHeaderRole>([['content-encoding', { kind: 'content-encoding' }]]);
  for (const [name, key] of Object.entries(HARNESS_IDENTITY)) roles.set(name, { kind: 'identity', key });
  for (const [configured, key] of Object.entries(correlation)) {
    const name = configured.toLowerCase();
    roles.set(name, { kind: 'drop', key: ROLLER_IDENTITY[name] ?? key });
  }
  for (const [name, key] of Object.entries(ROLLER_IDENTITY)) roles.set(name, { kind: 'drop', key });
  for (const name of HOP_BY_HOP) roles.set(name, HOP_ROLE);
  rolesByCorrelation.set(correlation, roles);
  return roles;
}

/**
 * Split a request's headers (node's `rawHeaders`) into what goes upstream and what is recorded. No header
 * object is built on the request path; a repeated header is forwarded as it came, and an identity header's
 * first occurrence is the one recorded. `correlation` names extra headers (e.g. OpenCode's) that carry
 * identity for the proxy only: removed, value kept as run_id unless the map says otherwise (names in any case; a
 * table is read once, at its first request, so it is not to be changed after).
 */
export function splitRequestHeaders(raw: readonly string[], correlation: Readonly<Record<string, keyof NativeIdentityHeaders>> = NO_CORRELATION): SplitHeaders {
  const roles = requestHeaderRoles(correlation);
  const forward: string[] = [];
  const identity: NativeIdentityHeaders = {};
  let fromRoller: NativeIdentityHeaders | undefined;
  let dropped: string[] | undefined;
  let connectionListed: Set<string> | undefined;
  let contentEncoding: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const rawName = raw[i]!;
    const value = raw[i + 1]!;
    const name = rawName.toLowerCase();
    const role = roles.get(name) ?? (name.startsWith('x-roller-') ? UNKNOWN_ROLLER_HEADER : undefined);
    if (role !== undefined) {
      if (role.kind === 'hop') {
        if (name === 'connection') {
          for (const token of value.split(',')) {
            const t = token.trim().toLowerCase();
            if (t && !CONNECTION_OPTIONS.has(t)) (connectionListed ??= new Set()).add(t);
          }
        }
        continue;
      }
      if (role.kind === 'drop') {
        dropped ??= [];
        if (!dropped.includes(name)) dropped.push(name);
        fromRoller ??= {};
        if (role.key && value && fromRoller[role.key] === undefined) fromRoller[role.key] = value;
        continue;
      }
      if (role.kind === 'identity') {
        if (value && identity[role.key] === undefined) identity[role.key] = value;
      } else if (contentEncoding === undefined) contentEncoding = value;
    }
    forward.push(rawName, value);
  }
  // Headers the client's Connection header names are hop-by-hop too (rare: filtered after the fact).
  let kept = forward;
  if (connectionListed) {
    kept = [];
    for (let i = 0; i < forward.length; i += 2) if (!connectionListed.has(forward[i]!.toLowerCase())) kept.push(forward[i]!, forward[i + 1]!);
  }
  const split: SplitHeaders = { forward: kept, identity: fromRoller ? { ...identity, ...fromRoller } : identity, dropped: dropped ? dropped.sort() : [] };
  if (contentEncoding !== undefined) split.contentEncoding = contentEncoding;
  return split;
}

const HOP = 1;
const SECRET = 2;
/**
 * What a response header is when it is not an ordinary one: hop-by-hop (HOP: recorded, not forwarded) or a credential
 * (SECRET: forwarded, never recorded). The two sets share no name.
 */
const RESPONSE_HEADER_ROLE = new Map<string, number>([...[...HOP_BY_HOP].map((n): [string, number] => [n, HOP]), ...[...SECRET_HEADERS].map((n): [string, number] => [n, SECRET])]);

export interface SplitResponseHead {
  /** Name, value, name, value, … for `res.writeHead` (names in lower case, hop-by-hop removed). */
  forClient: string[];
  /** The headers the log records (ResponseHeadMeta's, as undici's parseHeaders gives them, credentials removed). */
  recorded: RecordedResponseHead;
}

/**
 * One pass over undici's raw response headers: the client's header list and the recorded headers, with no header
 * object built in between (credentials, set-cookie among them, never recorded). A name that repeats makes the
 * recorded value an array in order, as parseHeaders does — that rare case goes through parseHeaders itself.
 */
export function splitResponseHead(status: number, raw: readonly (Buffer | string)[]): SplitResponseHead {
  const forClient: string[] = [];
  const pairs: string[] = [];
  let repeated = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = undiciUtil.headerNameToString(raw[i]!);
    const value = typeof raw[i + 1] === 'string' ? (raw[i + 1] as string) : (raw[i + 1] as Buffer).toString('latin1');
    const role = RESPONSE_HEADER_ROLE.get(name); // one lookup for both sets
    if (role !== HOP) forClient.push(name, value);
    if (repeated || role === SECRET) continue;
    for (let j = 0; j < pairs.length; j += 2) if (pairs[j] === name) repeated = true;
    pairs.push(name, value);
  }
  if (repeated) {
    const headers = undiciUtil.parseHeaders(raw as Buffer[]) as Record<string, string | string[]>;
    for (const name of SECRET_HEADERS) delete headers[name];
    return { forClient, recorded: { json: JSON.stringify({ status, headers }) } };
  }
  return { forClient, recorded: { pairs } };
}
