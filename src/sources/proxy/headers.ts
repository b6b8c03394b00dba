import type { IncomingHttpHeaders } from 'node:http';

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
  forward: Record<string, string | string[]>;
  identity: NativeIdentityHeaders;
  /** Names (never values) of the headers removed before forwarding. */
  dropped: string[];
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * Split request headers into what goes upstream and what is recorded. `correlation` names extra
 * headers (e.g. OpenCode's) that carry identity for the proxy only: removed, value kept as run_id unless
 * the map says otherwise.
 */
export function splitRequestHeaders(headers: IncomingHttpHeaders, correlation: Readonly<Record<string, keyof NativeIdentityHeaders>> = {}): SplitHeaders {
  const forward: Record<string, string | string[]> = {};
  const identity: NativeIdentityHeaders = {};
  const fromRoller: NativeIdentityHeaders = {};
  const dropped: string[] = [];
  const connectionListed = new Set(
    (first(headers.connection) ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (HOP_BY_HOP.has(name) || connectionListed.has(name)) continue;
    if (name.startsWith('x-roller-') || name in correlation) {
      dropped.push(name);
      const key = ROLLER_IDENTITY[name] ?? correlation[name];
      const v = first(value);
      if (key && v) fromRoller[key] = v;
      continue;
    }
    const key = HARNESS_IDENTITY[name];
    const v = first(value);
    if (key && v && identity[key] === undefined) identity[key] = v;
    forward[name] = value;
  }
  return { forward, identity: { ...identity, ...fromRoller }, dropped: dropped.sort() };
}

/** Response headers for the client: everything but hop-by-hop. */
export function responseHeadersForClient(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name.toLowerCase())) continue;
    out[name] = value;
  }
  return out;
}

/** Response headers as recorded in the wire log: credentials (set-cookie) never written. */
export function recordedResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  // Model APIs do not set cookies; copying every response's headers to drop none was a measurable cost.
  // (undici and node:http give header names in lower case.)
  let secret = false;
  for (const name of SECRET_HEADERS) if (name in headers) secret = true;
  if (!secret) return headers;
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SECRET_HEADERS.has(name.toLowerCase())) continue;
    out[name] = value;
  }
  return out;
}
