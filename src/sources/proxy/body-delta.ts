/**
 * Request bodies of a coding agent repeat each other: call N+1 sends call N's conversation again with a turn added
 * in the middle of the JSON (before the closing brackets, the tools, the settings). A published wire log stores such
 * a body as a reference to an earlier body plus the bytes that differ:
 *   body = base[0, prefix) + middle + base[base.length - suffix, base.length)
 * which turns the quadratic growth of a capture into linear. Writer and reader keep the same bases (DeltaWindow), so
 * a log decodes alone. Deltas are made when a capture is published, never on the request path.
 */
export interface BodyDelta {
  /** Call id of the base body (see DeltaWindow for which bodies can be bases). */
  base: string;
  prefix: number;
  suffix: number;
}

/** Bases kept: one per conversation key (LRU), at most this many and this many bytes. */
export const DELTA_MAX_KEYS = 256;
export const DELTA_MAX_BYTES = 64 << 20;
/** Bodies bigger than this are never kept as bases (they still get written, whole or as deltas). */
export const DELTA_MAX_BASE_BYTES = 16 << 20;
/** A delta is used only when it saves at least this many bytes. */
const MIN_SAVING = 512;
const BLOCK = 4096;

/** Length of the common prefix of a and b: block compares, then bytes. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const max = Math.min(a.length, b.length);
  let at = 0;
  while (at + BLOCK <= max && a.compare(b, at, at + BLOCK, at, at + BLOCK) === 0) at += BLOCK;
  while (at < max && a[at] === b[at]) at++;
  return at;
}

/** Length of the common suffix of a and b, at most `limit` bytes. */
export function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  const max = Math.min(a.length, b.length, limit);
  let n = 0;
  while (n + BLOCK <= max && a.compare(b, b.length - n - BLOCK, b.length - n, a.length - n - BLOCK, a.length - n) === 0) n += BLOCK;
  while (n < max && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

interface Base {
  id: string;
  body: Buffer;
}

/**
 * The bases: the last body of each conversation (keyed by the identity headers the harness sends — session, thread,
 * agent — so that interleaved sessions find their own), plus the last body of all. Writer and reader apply the same
 * rule to the same sequence of bodies, so they hold the same bases; eviction (least recently remembered first)
 * counts body bytes, so a reader never holds fewer bases than a writer of this or an earlier version did.
 */
export class DeltaWindow {
  /** In the order remembered (a Map keeps insertion order: the first entry is the oldest). */
  private readonly byKey = new Map<string, Base>();
  private bytes = 0;
  private last: Base | undefined;

  /** Every whole request body (no content-encoding, not omitted) goes through here, in log order. */
  remember(key: string, callId: string, body: Buffer): void {
    if (body.length > DELTA_MAX_BASE_BYTES) return;
    const old = this.byKey.get(key);
    if (old) {
      this.byKey.delete(key);
      this.bytes -= old.body.length;
    }
    // A copy: the caller's buffer (a view of a read buffer, a socket chunk) is not kept alive by the window.
    const base = { id: callId, body: Buffer.from(body) };
    this.byKey.set(key, base);
    this.bytes += body.length;
    this.last = base;
    for (const [oldestKey, oldest] of this.byKey) {
      if ((this.byKey.size <= DELTA_MAX_KEYS && this.bytes <= DELTA_MAX_BYTES) || oldest === base) break;
      this.byKey.delete(oldestKey);
      this.bytes -= oldest.body.length;
    }
  }

  /** The better delta of `body` against its conversation's last body and the last body of all, if one saves enough. */
  encode(key: string, body: Buffer): BodyDelta | undefined {
    let best: BodyDelta | undefined;
    for (const base of new Set([this.byKey.get(key), this.last])) {
      if (!base) continue;
      const prefix = commonPrefix(base.body, body);
      const suffix = commonSuffix(base.body, body, Math.min(base.body.length, body.length) - prefix);
      if (prefix + suffix >= MIN_SAVING && (!best || prefix + suffix > best.prefix + best.suffix)) best = { base: base.id, prefix, suffix };
    }
    return best;
  }

  /** The whole body of a delta frame, or undefined when its base is not held. */
  decode(key: string, delta: BodyDelta, middle: Buffer): Buffer | undefined {
    const own = this.byKey.get(key);
    const base = own?.id === delta.base ? own : this.last?.id === delta.base ? this.last : undefined;
    if (!base || delta.prefix + delta.suffix > base.body.length) return undefined;
    return Buffer.concat([base.body.subarray(0, delta.prefix), middle, base.body.subarray(base.body.length - delta.suffix)]);
  }
}

/**
 * The conversation a request belongs to, from its identity headers ('' when it sends none). A session id alone is its
 * own key; any other combination is joined with NULs, which no header value holds, so two identities share a key
 * exactly when their three values are equal with a missing one taken as ''.
 */
export function conversationKey(identity: { session_id?: string; thread_id?: string; agent_id?: string }): string {
  if (!identity.thread_id && !identity.agent_id) return identity.session_id ?? '';
  return `${identity.session_id ?? ''}\u0000${identity.thread_id ?? ''}\u0000${identity.agent_id ?? ''}`;
}
