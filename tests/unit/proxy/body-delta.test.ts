import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonPrefix, commonSuffix, conversationKey, DELTA_MAX_BASE_BYTES, DELTA_MAX_BYTES, DELTA_MAX_KEYS, DeltaWindow } from '../../../src/sources/proxy/body-delta.js';

function naivePrefix(a: Buffer, b: Buffer): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
function naiveSuffix(a: Buffer, b: Buffer, limit: number): number {
  let i = 0;
  while (i < limit && i < a.length && i < b.length && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

// Bodies that share long runs (so block boundaries and the binary search are exercised) and differ anywhere.
const shared = fc.uint8Array({ minLength: 0, maxLength: 9000 }).map((u) => Buffer.from(u));
const bytes = fc.uint8Array({ minLength: 0, maxLength: 300 }).map((u) => Buffer.from(u));

describe('body delta', () => {
  it('commonPrefix and commonSuffix agree with a byte-by-byte scan', () => {
    fc.assert(
      fc.property(shared, bytes, bytes, shared, fc.nat(20000), (head, x, y, tail, limit) => {
        const a = Buffer.concat([head, x, tail]);
        const b = Buffer.concat([head, y, tail]);
        expect(commonPrefix(a, b)).toBe(naivePrefix(a, b));
        const max = Math.min(limit, a.length, b.length);
        expect(commonSuffix(a, b, max)).toBe(naiveSuffix(a, b, max));
        const c = a.subarray(1); // bodies of other lengths
        expect(commonSuffix(b, c, max)).toBe(naiveSuffix(b, c, max));
      }),
      { numRuns: 300 },
    );
  });

  it('commonPrefix and commonSuffix find a single difference anywhere in a 300 KB body (at and around block edges)', () => {
    const base = Buffer.alloc(300_000);
    for (let i = 0; i < base.length; i++) base[i] = (i * 31 + (i >> 7)) & 0xff;
    for (const at of [0, 1, 127, 128, 4095, 4096, 4097, 12_287, 12_288, 28_671, 65_535, 150_001, 299_998, 299_999]) {
      const other = Buffer.from(base);
      other[at] = other[at]! ^ 0xff;
      expect(commonPrefix(base, other)).toBe(at);
      expect(commonSuffix(base, other, base.length)).toBe(base.length - 1 - at);
      expect(commonSuffix(base, other, 1000)).toBe(Math.min(1000, base.length - 1 - at));
    }
    expect(commonPrefix(base, base.subarray(0, 200_000))).toBe(200_000);
    expect(commonSuffix(base, base.subarray(100_000), 300_000)).toBe(200_000);
  });

  it('a body encoded against the window decodes to the same bytes on a window fed the same sequence', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('s1', 's2', 's3'), shared, bytes), { minLength: 1, maxLength: 12 }), (steps) => {
        const writer = new DeltaWindow();
        const reader = new DeltaWindow();
        const last = new Map<string, Buffer>();
        steps.forEach(([session, grow, turn], i) => {
          const key = conversationKey({ session_id: session });
          // A conversation grows in the middle: previous body, a new turn, the same closing part.
          const prev = last.get(session) ?? Buffer.from('{"messages":[]}');
          const body = Buffer.concat([prev.subarray(0, Math.max(0, prev.length - 2)), grow, turn, Buffer.from(']}')]);
          last.set(session, body);
          const delta = writer.encode(key, body);
          writer.remember(key, `c${i}`, body);
          const stored = delta ? body.subarray(delta.prefix, body.length - delta.suffix) : body;
          const back = delta ? reader.decode(key, delta, stored) : stored;
          expect(back?.equals(body)).toBe(true);
          reader.remember(key, `c${i}`, back!);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("keeps its own copy of a base: the caller's buffer may be reused or changed after remember", () => {
    const w = new DeltaWindow();
    const key = conversationKey({ session_id: 's' });
    const body = Buffer.from(`{"messages":["${'tool output '.repeat(300)}"]}`);
    const original = Buffer.from(body);
    w.remember(key, 'c1', body);
    body.fill(0x41); // the socket's buffer, reused
    const next = Buffer.concat([original.subarray(0, original.length - 2), Buffer.from(',"next"]}')]);
    const delta = w.encode(key, next);
    expect(delta?.prefix).toBe(original.length - 2);
    const back = w.decode(key, delta!, next.subarray(delta!.prefix, next.length - delta!.suffix));
    expect(back?.equals(next)).toBe(true);
  });

  it('holds at most DELTA_MAX_KEYS conversations and DELTA_MAX_BYTES, and never a body over DELTA_MAX_BASE_BYTES', () => {
    const w = new DeltaWindow();
    const big = Buffer.alloc(DELTA_MAX_BASE_BYTES / 4, 0x61);
    for (let s = 0; s < 40; s++) w.remember(conversationKey({ session_id: `s${s}` }), `c${s}`, big);
    const held = (k: number) => w.decode(conversationKey({ session_id: `s${k}` }), { base: `c${k}`, prefix: 1, suffix: 0 }, Buffer.alloc(0)) !== undefined;
    const kept = Array.from({ length: 40 }, (_, k) => held(k));
    expect(kept.filter(Boolean)).toHaveLength(DELTA_MAX_BYTES / big.length);
    expect(kept.lastIndexOf(false)).toBe(39 - DELTA_MAX_BYTES / big.length); // the oldest went first
    // A body too big to be a base leaves the conversation's base as it was (the rule writers of earlier versions kept).
    w.remember(conversationKey({ session_id: 's39' }), 'c-huge', Buffer.alloc(DELTA_MAX_BASE_BYTES + 1));
    expect(held(39)).toBe(true);
    const small = new DeltaWindow();
    for (let s = 0; s < DELTA_MAX_KEYS + 10; s++) small.remember(conversationKey({ session_id: `s${s}` }), `c${s}`, Buffer.from(`{"s":${s}}`));
    expect(small.decode(conversationKey({ session_id: 's9' }), { base: 'c9', prefix: 1, suffix: 0 }, Buffer.alloc(0))).toBeUndefined();
    expect(small.decode(conversationKey({ session_id: 's10' }), { base: 'c10', prefix: 1, suffix: 0 }, Buffer.alloc(0))).toBeDefined();
  });

  it('finds a session\'s own previous body among interleaved sessions', () => {
    const w = new DeltaWindow();
    const filler = 'tool output '.repeat(500);
    for (let s = 0; s < 40; s++) w.remember(conversationKey({ session_id: `s${s}` }), `c${s}`, Buffer.from(`{"messages":["s${s} ${filler}"],"tools":[]}`));
    const next = Buffer.from(`{"messages":["s7 ${filler}","a new turn"],"tools":[]}`);
    const delta = w.encode(conversationKey({ session_id: 's7' }), next);
    expect(delta?.base).toBe('c7');
    expect(next.length - delta!.prefix - delta!.suffix).toBe('","a new turn'.length);
  });

  it("takes whichever of the conversation's own base and the last body of all saves more", () => {
    const filler = 'file contents '.repeat(400);
    const own = conversationKey({ session_id: 'own' });
    // A conversation whose next turn is a small change: its own base wins.
    const a = new DeltaWindow();
    a.remember(own, 'c-own', Buffer.from(`{"messages":["${filler}"]}`));
    a.remember(conversationKey({ session_id: 'other' }), 'c-other', Buffer.from(`{"messages":["${filler}"],"x":1}`));
    expect(a.encode(own, Buffer.from(`{"messages":["${filler}","next"]}`))?.base).toBe('c-own');
    // A session that restarted with a new id but the same content as the last request of all: the last body found.
    const b = new DeltaWindow();
    b.remember(own, 'c-own', Buffer.from(`{"messages":["${'unrelated '.repeat(600)}"]}`));
    b.remember(conversationKey({ session_id: 'sub' }), 'c-last', Buffer.from(`{"messages":["${filler}"]}`));
    const delta = b.encode(own, Buffer.from(`{"messages":["${filler}","next"]}`));
    expect(delta?.base).toBe('c-last');
    expect(delta!.prefix + delta!.suffix).toBeGreaterThan(filler.length);
    // Nothing that saves enough: no delta.
    expect(new DeltaWindow().encode(own, Buffer.from(filler))).toBeUndefined();
  });

  it('evicts the conversation remembered longest ago, counting a conversation that took a turn as remembered anew', () => {
    const w = new DeltaWindow();
    const body = (k: number, turn: number) => Buffer.from(`{"messages":["${k}:${'x'.repeat(600)}"${',"t"'.repeat(turn)}]}`);
    const held = (k: number, id: string) => w.decode(conversationKey({ session_id: `s${k}` }), { base: id, prefix: 1, suffix: 0 }, Buffer.alloc(0)) !== undefined;
    for (let k = 0; k < DELTA_MAX_KEYS; k++) w.remember(conversationKey({ session_id: `s${k}` }), `c${k}-0`, body(k, 0));
    // Sessions 0 and 1 take a turn: now 2 and 3 are the least recent.
    for (const k of [0, 1]) {
      const key = conversationKey({ session_id: `s${k}` });
      const next = body(k, 1);
      w.remember(key, `c${k}-1`, next);
    }
    w.remember(conversationKey({ session_id: 'new-a' }), 'ca', body(1000, 0));
    w.remember(conversationKey({ session_id: 'new-b' }), 'cb', body(1001, 0));
    expect(held(2, 'c2-0')).toBe(false);
    expect(held(3, 'c3-0')).toBe(false);
    expect(held(0, 'c0-1')).toBe(true);
    expect(held(1, 'c1-1')).toBe(true);
    expect(held(4, 'c4-0')).toBe(true);
    w.remember(conversationKey({ session_id: 'new-c' }), 'cc', body(1002, 0));
    expect(held(4, 'c4-0')).toBe(false);
    expect(held(0, 'c0-1')).toBe(true);
  });

  it('a conversation key groups identities as the joined key of earlier versions did (a missing value is the empty one)', () => {
    const ids = [{}, { session_id: '' }, { session_id: 's' }, { session_id: 's', thread_id: '' }, { session_id: 's', agent_id: '' }, { session_id: 's', thread_id: 't' }, { thread_id: 't' }, { session_id: '', thread_id: 't' }, { agent_id: 'a' }, { session_id: 's', agent_id: 'a' }, { session_id: 's', thread_id: 't', agent_id: 'a' }, { session_id: 't' }, { session_id: 'a' }];
    const joined = (i: { session_id?: string; thread_id?: string; agent_id?: string }) => `${i.session_id ?? ''}\u0000${i.thread_id ?? ''}\u0000${i.agent_id ?? ''}`;
    for (const a of ids) for (const b of ids) expect([a, b, conversationKey(a) === conversationKey(b)]).toEqual([a, b, joined(a) === joined(b)]);
    expect(conversationKey({ session_id: 'sess-1' })).toBe('sess-1');
  });
});
