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
export function commonPrefix(a: Buffer, b: Buffer, hint = 0): number {
  return prefixOf(a, a.length, b, b.length, hint);
}

/**
 * commonPrefix of a[0, aLength) and b[0, bLength). `hint`: where the first difference probably is not before (the
 * prefix `a` itself shared with its own predecessor: a conversation's next body changes it after that point) — one
 * compare up to there instead of galloping towards it, and the halving confined to the turn that follows. The answer
 * is exact whatever the hint.
 */
function prefixOf(a: Buffer, aLength: number, b: Buffer, bLength: number, hint = 0): number {
  const max = Math.min(aLength, bLength);
  let at = 0;
  // After a hint the difference is usually within bytes of it (the new turn starts there): the gallop starts small, not
  // at a block, whose halving compared ~4 KB more per body (27.3 against 22.9 KB on the bench's, in as many calls).
  let step = BLOCK;
  if (hint > BLOCK && hint <= max) {
    if (!same(a, 0, b, 0, hint)) return firstDifference(a, b, 0, hint);
    at = hint;
    step = 2 * SCAN;
  }
  for (; at < max; step *= 2) {
    const n = Math.min(step, max - at);
    if (!same(a, at, b, at, n)) return firstDifference(a, b, at, n);
    at += n;
  }
  return max;
}

/** The first index in [at, at + len) where a and b differ (they do differ there): halving, then a byte loop. */
function firstDifference(a: Buffer, b: Buffer, at: number, len: number): number {
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

/** Length of the common suffix of a and b, at most `limit` bytes (the same search, from the ends). */
export function commonSuffix(a: Buffer, b: Buffer, limit: number, hint = 0): number {
  return suffixOf(a, a.length, b, b.length, limit, hint);
}

/**
 * commonSuffix of a[0, aLength) and b[0, bLength). `hint`: the suffix `a` shared with its own predecessor — the
 * closing part a conversation repeats (tools, settings): one compare of that much, then a few bytes one by one (it
 * usually ends right there) before galloping on. The answer is exact whatever the hint.
 */
function suffixOf(a: Buffer, aLength: number, b: Buffer, bLength: number, limit: number, hint = 0): number {
  const max = Math.min(aLength, bLength, limit);
  const ea = aLength;
  const eb = bLength;
  let n = 0; // bytes from the ends known equal
  if (hint > SCAN && hint <= max) {
    if (!same(a, ea - hint, b, eb - hint, hint)) return lastDifference(a, ea, b, eb, 0, hint, max);
    n = hint;
    for (const stop = Math.min(max, n + SCAN); n < stop; n++) if (a[ea - 1 - n] !== b[eb - 1 - n]) return n;
  }
  for (let step = BLOCK; n < max; step *= 2) {
    const k = Math.min(step, max - n);
    if (!same(a, ea - n - k, b, eb - n - k, k)) return lastDifference(a, ea, b, eb, n, k, max);
    n += k;
  }
  return max;
}

/** Bytes from the ends that are equal, knowing the first `n` are and a difference is in the `len` after them. */
function lastDifference(a: Buffer, ea: number, b: Buffer, eb: number, n: number, len: number, max: number): number {
  while (len > SCAN) {
    const half = len >> 1;
    if (same(a, ea - n - half, b, eb - n - half, half)) {
      n += half;
      len -= half;
    } else len = half;
  }
  while (n < max && a[ea - 1 - n] === b[eb - 1 - n]) n++;
  return n;
}

interface Base {
  /** Its conversation key (to evict it by). */
  key: string;
  id: string;
  /** The window's own memory for this conversation's bases, reused from one body to the next. */
  store: Buffer;
  /** The body: `store`'s first `length` bytes. */
  length: number;
  /** The prefix and suffix the body shared with the base it was a delta of (0: none): where the next searches start. */
  prefixHint: number;
  suffixHint: number;
  /** Neighbours in the order of remembering (least recent first): the window evicts from the old end. */
  older: Base | undefined;
  newer: Base | undefined;
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
 * caller's buffer now dies young. And the usual copy is a small one: a body that is a delta of its conversation's
 * base is patched into that base's store (its middle written, its suffix moved), not copied whole.
 */
export class DeltaWindow {
  private readonly byKey = new Map<string, Base>();
  /** Stores no base uses, for the next conversation or a conversation that outgrew its own. */
  private readonly free: Buffer[] = [];
  /** Bytes of all stores held, in use or free. */
  private bytes = 0;
  private allocated = 0;
  private last: Base | undefined;
  /** Ends of the list of bases in the order they were remembered. */
  private oldest: Base | undefined;
  private newest: Base | undefined;

  /** Stores allocated so far (a diagnostic: it stops growing once conversations come and go at a steady rate). */
  get allocatedStores(): number {
    return this.allocated;
  }

  /**
   * Every whole request body (no content-encoding, not omitted) goes through here, in log order, with the delta it
   * was (or could be) stored as, if any. A conversation's base is rewritten in place; which base goes first when the
   * window is full is the one remembered longest ago.
   */
  remember(key: string, callId: string, body: Buffer, delta?: BodyDelta): void {
    if (body.length > DELTA_MAX_BASE_BYTES) return;
    let base = this.byKey.get(key);
    if (base) {
      this.unlink(base);
      // `last` may be `base`: it is the base remembered now either way, so its store is free to rewrite or replace.
      if (delta !== undefined && delta.base === base.id && base.store.length >= body.length && delta.prefix + delta.suffix <= base.length) {
        // The body is this base with its middle replaced: keep the prefix where it is, move the suffix, write the middle.
        const store = base.store;
        const middleEnd = body.length - delta.suffix;
        if (delta.suffix > 0 && middleEnd !== base.length - delta.suffix) store.copyWithin(middleEnd, base.length - delta.suffix, base.length);
        if (middleEnd > delta.prefix) body.copy(store, delta.prefix, delta.prefix, middleEnd);
      } else {
        if (base.store.length < body.length) {
          this.giveBack(base.store);
          base.store = this.takeStore(body.length);
        }
        body.copy(base.store, 0, 0, body.length);
      }
      base.id = callId;
      base.length = body.length;
      base.prefixHint = delta?.prefix ?? 0;
      base.suffixHint = delta?.suffix ?? 0;
    } else {
      base = { key, id: callId, store: this.takeStore(body.length), length: body.length, prefixHint: delta?.prefix ?? 0, suffixHint: delta?.suffix ?? 0, older: undefined, newer: undefined };
      this.byKey.set(key, base);
      body.copy(base.store, 0, 0, body.length);
    }
    this.append(base);
    this.last = base;
    while (this.byKey.size > DELTA_MAX_KEYS || this.bytes > DELTA_MAX_BYTES) {
      const spare = this.free.pop();
      if (spare) {
        this.bytes -= spare.length;
        continue;
      }
      const oldest = this.oldest;
      if (oldest === undefined || oldest === base) break; // never the body just remembered
      this.unlink(oldest);
      this.byKey.delete(oldest.key);
      // `last` is the newest base, never an evicted one: the store is no one's now.
      this.giveBack(oldest.store);
    }
  }

  private unlink(base: Base): void {
    if (base.older) base.older.newer = base.newer;
    else this.oldest = base.newer;
    if (base.newer) base.newer.older = base.older;
    else this.newest = base.older;
    base.older = base.newer = undefined;
  }

  private append(base: Base): void {
    base.older = this.newest;
    if (this.newest) this.newest.newer = base;
    else this.oldest = base;
    this.newest = base;
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
    const own = this.byKey.get(key);
    const best = own ? this.deltaTo(own, body, undefined) : undefined;
    const last = this.last;
    if (last === undefined || last === own || (best && best.prefix + best.suffix >= body.length >> 1)) return best;
    return this.deltaTo(last, body, best);
  }

  /** The delta of `body` against `base` when it saves more than `best` (or MIN_SAVING) does, else `best`. */
  private deltaTo(base: Base, body: Buffer, best: BodyDelta | undefined): BodyDelta | undefined {
    const prefix = prefixOf(base.store, base.length, body, body.length, base.prefixHint);
    const suffix = suffixOf(base.store, base.length, body, body.length, Math.min(base.length, body.length) - prefix, base.suffixHint);
    const saving = prefix + suffix;
    if (saving < MIN_SAVING || (best && saving <= best.prefix + best.suffix)) return best;
    return { base: base.id, prefix, suffix };
  }

  /** The whole body of a delta frame, or undefined when its base is not held. */
  decode(key: string, delta: BodyDelta, middle: Buffer): Buffer | undefined {
    const own = this.byKey.get(key);
    const base = own?.id === delta.base ? own : this.last?.id === delta.base ? this.last : undefined;
    if (!base || delta.prefix + delta.suffix > base.length) return undefined;
    return Buffer.concat([base.store.subarray(0, delta.prefix), middle, base.store.subarray(base.length - delta.suffix, base.length)]);
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

/**
 * The conversation a request belongs to, from its identity headers ('' when it sends none). A session id alone (the
 * usual case) is its own key — no string built per request; any other combination is joined with NULs, which no
 * header value holds, so the two kinds of key never meet. Two identities share a key exactly when their three values
 * are equal with a missing one taken as '' — the rule logs were written with when every key was joined, so a reader of
 * this version holds the same bases as their writer did.
 */
export function conversationKey(identity: { session_id?: string; thread_id?: string; agent_id?: string }): string {
  if (!identity.thread_id && !identity.agent_id) return identity.session_id ?? '';
  return `${identity.session_id ?? ''}\u0000${identity.thread_id ?? ''}\u0000${identity.agent_id ?? ''}`;
}
