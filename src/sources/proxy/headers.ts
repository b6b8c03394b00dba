import { SECRET_HEADERS } from '../../core/redaction.js';

/** Credentials: forwarded, their values never written anywhere. */
export { SECRET_HEADERS };

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'expect']);

/** roller's own headers: removed before forwarding, their values recorded. */
const ROLLER_IDENTITY = new Map<string, keyof NativeIdentityHeaders>([
  ['x-roller-run-id', 'run_id'],
  ['x-roller-session-id', 'session_id'],
  ['x-roller-thread-id', 'thread_id'],
  ['x-roller-agent-id', 'agent_id'],
]);

export interface NativeIdentityHeaders {
  run_id?: string;
  session_id?: string;
  thread_id?: string;
  agent_id?: string;
}

/** Header name (lower case) -> the identity field its value is recorded as. */
export type CorrelationHeaders = Readonly<Record<string, keyof NativeIdentityHeaders>>;

export interface SplitHeaders {
  /** Name, value, name, value, … as received (names in their case): what goes upstream. */
  forward: string[];
  identity: NativeIdentityHeaders;
  /** Names (lower case, sorted, never values) of the headers removed before forwarding. */
  dropped: string[];
  contentEncoding?: string;
}

/**
 * A request's headers (node's `rawHeaders`) split into what goes upstream and what is recorded. A repeated header is
 * forwarded as it came; an identity header's first occurrence is the one recorded. `identity` names the headers the
 * harnesses send that name their session or agent (each adapter's identityHeaders): forwarded, their values recorded.
 * `correlation` names extra headers (OpenCode's) that carry identity for the proxy only: removed, their value kept
 * under the key the map gives.
 */
export function splitRequestHeaders(raw: readonly string[], correlation: CorrelationHeaders = {}, identity: CorrelationHeaders = {}): SplitHeaders {
  const extra = new Map(Object.entries(correlation).map(([name, key]) => [name.toLowerCase(), key]));
  const recorded = new Map(Object.entries(identity).map(([name, key]) => [name.toLowerCase(), key]));
  const connectionListed = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) connectionListed.add(token.trim().toLowerCase());
  }
  const forward: string[] = [];
  const harness: NativeIdentityHeaders = {};
  const roller: NativeIdentityHeaders = {};
  const dropped = new Set<string>();
  let contentEncoding: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (HOP_BY_HOP.has(name) || connectionListed.has(name)) continue;
    const removedAs = name.startsWith('x-roller-') || extra.has(name) ? (ROLLER_IDENTITY.get(name) ?? extra.get(name)) : null;
    if (removedAs !== null) {
      dropped.add(name);
      if (removedAs && value && roller[removedAs] === undefined) roller[removedAs] = value;
      continue;
    }
    const key = recorded.get(name);
    if (key && value && harness[key] === undefined) harness[key] = value;
    if (name === 'content-encoding') contentEncoding ??= value;
    forward.push(raw[i]!, value);
  }
  const split: SplitHeaders = { forward, identity: { ...harness, ...roller }, dropped: [...dropped].sort() };
  if (contentEncoding !== undefined) split.contentEncoding = contentEncoding;
  return split;
}

export interface SplitResponseHead {
  /** Name, value, name, value, … for the client (hop-by-hop removed). */
  forClient: string[];
  /** What the log records: names in lower case, a repeated one as an array in order, credentials left out. */
  recorded: Record<string, string | string[]>;
}

/** undici's raw response headers as the client gets them and as the log records them. */
export function splitResponseHead(raw: readonly (Buffer | string)[]): SplitResponseHead {
  const forClient: string[] = [];
  const recorded: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString().toLowerCase();
    const v = raw[i + 1]!;
    const value = typeof v === 'string' ? v : v.toString('latin1');
    if (!HOP_BY_HOP.has(name)) forClient.push(name, value);
    if (SECRET_HEADERS.has(name)) continue;
    const seen = recorded[name];
    recorded[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return { forClient, recorded };
}
