/**
 * Request bodies of a coding agent repeat each other: call N+1 sends call N's conversation again with a
 * turn added in the middle of the JSON (before the closing brackets, the tools, the settings). The wire
 * log stores such a body as a reference to a recent body plus the bytes that differ:
 *   body = base[0, prefix) + middle + base[base.length - suffix, base.length)
 * which turns the quadratic growth of a capture into linear, and takes the page-cache copy of the
 * repeated bytes (about 2 µs per KB here) off the request path. Writer and reader keep the same bases,
 * so a log decodes alone.
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

/** a[aFrom, aFrom + n) equals b[bFrom, bFrom + n), without creating views. */
const same = (a: Buffer, aFrom: number, b: Buffer, bFrom: number, n: number): boolean => a.compare(b, bFrom, bFrom + n, aFrom, aFrom + n) === 0;

/**
 * Below this many bytes the first difference is found by a byte loop, not by halving: each native compare
 * costs ~0.3 µs of call overhead (offset checks in Buffer.prototype.compare), a byte of the loop ~1 ns.
 */
const SCAN = 128;

/**
 * Length of the common prefix of a and b. Native compares over blocks that double while they match (4 KB, 8 KB,
 * 16 KB, …: a 500 KB body that repeats its predecessor is ~7 calls, not 125 blocks), then halving inside the first
 * block that differs, then a byte loop.
 */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const max = Math.min(a.length, b.length);
  let at = 0;
  for (let step = BLOCK; at < max; step *= 2) {
    const n = Math.min(step, max - at);
    if (same(a, at, b, at, n)) {
      at += n;
      continue;
    }
    // The first difference is in [at, at + len).
    let len = n;
    while (len > SCAN) {
      const half = len >> 1;
      if (same(a, at, b, at, half)) {
        at += half;
        len -= half;
      } else len = half;
    }
    while (a[at] === b[at]) at++;
    return at;
  }
  return max;
}

/** Length of the common suffix of a and b, at most `limit` bytes (the same search, from the ends). */
export function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  const max = Math.min(a.length, b.length, limit);
  const ea = a.length;
  const eb = b.length;
  let n = 0; // bytes from the ends known equal
  for (let step = BLOCK; n < max; step *= 2) {
    const k = Math.min(step, max - n);
    if (same(a, ea - n - k, b, eb - n - k, k)) {
      n += k;
      continue;
    }
    // The first difference from the ends is in [n, n + len) bytes from them.
    let len = k;
    while (len > SCAN) {
      const half = len >> 1;
      if (same(a, ea - n - half, b, eb - n - half, half)) {
        n += half;
        len -= half;
      } else len = half;
    }
    while (a[ea - 1 - n] === b[eb - 1 - n]) n++;
    return n;
  }
  return max;
}

interface Base {
  id: string;
  /** The body: a view of `store`'s first bytes. */
  body: Buffer;
  /** The window's own memory for this conversation's bases, reused from one body to the next. */
  store: Buffer;
}

/**
 * The bases: the last body of each conversation (keyed by the identity headers the harness sends —
 * session, thread, agent — so that interleaved sessions find their own), plus the last body of all.
 * Writer and reader apply the same rule to the same sequence, so they hold the same bases.
 *
 * A base is a copy in memory the window owns, never the caller's buffer, and that memory is recycled: a
 * conversation's store is rewritten by its next body, a store outgrown or evicted goes to a free list, and a new
 * conversation takes one from there: once conversations come and go at a steady rate, nothing is allocated here.
 * Why: a caller's buffer kept as a base lives from one request of its conversation to the next, long enough to be
 * promoted out of V8's young generation, and then only a full mark-compact frees its memory — the bench proxy kept
 * ~100 MB/s of request bodies that way, and every one of them counted toward V8's next full collection (see
 * bin/roller for the rest of that story). A copy of a body that is in cache anyway costs a few microseconds; the
 * caller's buffer now dies young.
 */
export class DeltaWindow {
  private readonly byKey = new Map<string, Base>();
  /** Stores no base uses, for the next conversation or a conversation that outgrew its own. */
  private readonly free: Buffer[] = [];
  /** Bytes of all stores held, in use or free. */
  private bytes = 0;
  private allocated = 0;
  private last: Base | undefined;

  /** Stores allocated so far (a diagnostic: it stops growing once conversations come and go at a steady rate). */
  get allocatedStores(): number {
    return this.allocated;
  }

  /** Every whole request body (no content-encoding, not omitted) goes through here, in log order. */
  remember(key: string, callId: string, body: Buffer): void {
    if (body.length > DELTA_MAX_BASE_BYTES) return;
    const old = this.byKey.get(key);
    let store: Buffer | undefined;
    if (old) {
      this.byKey.delete(key); // re-inserted below: the map's order is least recently used first
      // `last` may be `old`: it is replaced below, so old's store is free to rewrite or give back.
      if (old.store.length >= body.length) store = old.store;
      else this.giveBack(old.store);
    }
    store ??= this.takeStore(body.length);
    body.copy(store, 0, 0, body.length);
    const base: Base = { id: callId, body: store.subarray(0, body.length), store };
    this.byKey.set(key, base);
    this.last = base;
    while (this.byKey.size > DELTA_MAX_KEYS || this.bytes > DELTA_MAX_BYTES) {
      const spare = this.free.pop();
      if (spare) {
        this.bytes -= spare.length;
        continue;
      }
      const [k, b] = this.byKey.entries().next().value as [string, Base];
      if (b === base) break; // never the body just remembered
      this.byKey.delete(k);
      // `last` is the newest base, never an evicted one: the store is no one's now.
      this.giveBack(b.store);
    }
  }

  /** The smallest free store that holds `bytes`, or a new one. */
  private takeStore(bytes: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) if (this.free[i]!.length >= bytes && (best < 0 || this.free[i]!.length < this.free[best]!.length)) best = i;
    if (best >= 0) {
      const store = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
      return store;
    }
    const store = newStore(bytes);
    this.bytes += store.length;
    this.allocated++;
    return store;
  }

  private giveBack(store: Buffer): void {
    if (this.free.length < MAX_FREE_STORES) this.free.push(store);
    else this.bytes -= store.length;
  }

  /**
   * The better delta of `body` against its conversation's last body and the last body of all. The second is
   * not tried when the first already saves half the body: comparing costs a pass over both bodies (tens of
   * microseconds for the 100-500 KB bodies of a long session; 2-3 us on the request path for the bench's 20 KB ones,
   * where another session's body shares a few KB of tools and settings at the end), and in the usual case — the
   * conversation's next turn — the other can only do a little better, if at all. It is for a conversation whose
   * own base is missing or poor (a session restarted under a new id with the same content).
   */
  encode(key: string, body: Buffer): BodyDelta | undefined {
    let best: BodyDelta | undefined;
    let bestSaving = MIN_SAVING - 1;
    const own = this.byKey.get(key);
    for (const base of own === this.last ? [own] : [own, this.last]) {
      if (!base) continue;
      if (best && bestSaving >= body.length >> 1) break;
      const prefix = commonPrefix(base.body, body);
      const suffix = commonSuffix(base.body, body, Math.min(base.body.length, body.length) - prefix);
      if (prefix + suffix > bestSaving) {
        best = { base: base.id, prefix, suffix };
        bestSaving = prefix + suffix;
      }
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
 * Memory for a conversation's bases: its own allocation (never a slice of node's shared pool), with room for
 * the conversation to grow (twice the body) — a session's bodies grow by a turn per request, and a store that
 * fits the next body is rewritten in place instead of replaced.
 */
function newStore(bytes: number): Buffer {
  return Buffer.allocUnsafeSlow(Math.min(DELTA_MAX_BASE_BYTES, Math.max(16 << 10, bytes * 2)));
}

/** Free stores kept (beyond them an outgrown or evicted store is let go). */
const MAX_FREE_STORES = 64;

/** The conversation a request belongs to, from its identity headers ('' when it sends none). */
export function conversationKey(identity: { session_id?: string; thread_id?: string; agent_id?: string }): string {
  return `${identity.session_id ?? ''}\u0000${identity.thread_id ?? ''}\u0000${identity.agent_id ?? ''}`;
}
