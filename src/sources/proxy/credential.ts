import { isSecretQueryName, SECRET_HEADERS } from '../../core/redaction.js';
import { SecretMasker } from '../../core/secret-masker.js';
import type { UpstreamTarget } from './request-target.js';

/**
 * Key custody: the client (a harness roller started) was given `standIn`, a per-attempt credential worth nothing
 * elsewhere; the proxy alone holds `key` and puts it where the client put the stand-in. A request that does not carry
 * the stand-in is refused, so a harness pointed at the proxy by anything but roller is seen, not served.
 */
export interface CredentialCustody {
  standIn: string;
  /** The real credential ('' or absent: the upstream takes none, and the stand-in is removed). */
  key?: string;
}

export interface CredentialSwap {
  /** Headers to send upstream (name, value, …). */
  forward: string[];
  /** Credential headers removed (names, lower case): they did not carry the stand-in. */
  removed: string[];
  /** The request carried the stand-in (always true without custody). */
  admitted: boolean;
  /** Credential values this request forwards, to be masked in everything written and relayed. */
  forwarded: string[];
}

/** The request's credential headers: the stand-in swapped for the key; any other credential header removed. */
export function swapCredential(headers: readonly string[], custody: CredentialCustody | undefined): CredentialSwap {
  const forward: string[] = [];
  const removed = new Set<string>();
  const forwarded: string[] = [];
  let admitted = custody === undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    const lower = name.toLowerCase();
    if (!SECRET_HEADERS.has(lower)) {
      forward.push(name, value);
      continue;
    }
    if (!custody) {
      forward.push(name, value);
      forwarded.push(...credentialParts(value));
      continue;
    }
    if (!value.includes(custody.standIn)) {
      removed.add(lower);
      continue;
    }
    admitted = true;
    if (!custody.key) {
      removed.add(lower);
      continue;
    }
    const real = value.split(custody.standIn).join(custody.key);
    forward.push(name, real);
    forwarded.push(...credentialParts(real));
  }
  return { forward, removed: [...removed].sort(), admitted, forwarded };
}

/** A path whose query carries the stand-in: the key in its place (or the parameter's value emptied). */
export function swapQueryCredential(path: string, custody: CredentialCustody | undefined): { path: string; admitted: boolean } {
  if (!custody || !path.includes(custody.standIn)) return { path, admitted: false };
  return { path: path.split(custody.standIn).join(encodeURIComponent(custody.key ?? '')), admitted: true };
}

/**
 * The values of credential-named parameters in a request's own query (`?key=…`, `api_key=…`): a client's credential
 * under `roller proxy`, or the key roller swapped in, masked wherever an upstream echoes them.
 */
export function queryCredentials(path: string): string[] {
  const q = path.indexOf('?');
  if (q === -1) return [];
  const values: string[] = [];
  try {
    for (const [name, value] of new URLSearchParams(path.slice(q + 1).split('#')[0])) if (value && isSecretQueryName(name)) values.push(value);
  } catch {
    // a query that does not parse: nothing more to mask from it
  }
  return values;
}

/** A header value and, for `Bearer x` / `Basic x`, the token alone (and Basic's decoded user and password). */
/**
 * The secrets of a credential header's value: `Scheme token` gives the token (and a Basic token's parts) — not the
 * whole value, whose 12-character pieces would then include the scheme and the token's public prefix (`Bearer
 * roller-verif…`) and mask ordinary text such as a path; a bare value is itself.
 */
export function credentialParts(value: string): string[] {
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(value);
  if (!m) return [value];
  return [m[2]!, ...(m[1]!.toLowerCase() === 'basic' ? basicParts(m[2]!) : [])];
}

function basicParts(b64: string): string[] {
  const decoded = Buffer.from(b64, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? [decoded] : [decoded, decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/**
 * Every secret the proxy itself knows before any request: the custody key, the upstream's userinfo (as configured and
 * as the Basic header it becomes) and the values of its credential-named query parameters.
 */
export function proxySecrets(upstream: UpstreamTarget & { basicAuth: string | undefined }, custody: CredentialCustody | undefined, extra: readonly string[] = []): SecretMasker {
  const values: string[] = [...extra];
  if (custody?.key) values.push(custody.key, encodeURIComponent(custody.key));
  if (upstream.basicAuth) values.push(upstream.basicAuth, ...basicParts(upstream.basicAuth));
  for (const [name, value] of new URLSearchParams(upstream.query)) {
    if (isSecretQueryName(name) && value) values.push(value, encodeURIComponent(value));
  }
  return new SecretMasker(values);
}
