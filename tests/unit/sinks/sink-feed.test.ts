/**
 * A user's sink fed over a run (SinkFeed): one that throws, hangs at the end, or stops taking items is reported with
 * its name and the item it had last, and the run's pushes never wait on it past its deadline.
 */
import { describe, expect, it } from 'vitest';
import type { Sink } from '../../../src/core/stage.js';
import { SinkFeed } from '../../../src/sinks/user-sink.js';

const deadlines = { itemMs: 200, endMs: 200 };
const never = () => new Promise<never>(() => {});

describe('SinkFeed deadlines', () => {
  it('a sink that takes everything and never finishes is reported at its end deadline, its signal aborted', async () => {
    let signal: AbortSignal | undefined;
    const sink: Sink<number> = { name: 'hangs', async consume(input, ctx) { signal = ctx.signal; for await (const _ of input); return never(); } };
    const feed = new SinkFeed(sink, undefined, 4, deadlines);
    for (let i = 0; i < 3; i++) await feed.push(i, `item ${i}`);
    expect(await feed.end()).toEqual({ sink: 'hangs', at: 'item 2', message: "it did not finish within 0.2 s of the run's end (--sink-timeout); what it wrote may be incomplete" });
    expect(signal?.aborted).toBe(true);
  });

  it('a sink that stops taking items is given up while they wait: later pushes return at once, end reports it', async () => {
    const sink: Sink<number> = { name: 'crawls', async consume(input) { for await (const _ of input) await never(); return { name: 'crawls', received: 0, written: 0 }; } };
    const feed = new SinkFeed(sink, undefined, 2, deadlines);
    // The first is taken and never let go; the next two fill the queue; the fourth waits for space until the deadline.
    for (let i = 0; i < 4; i++) await feed.push(i, `item ${i}`);
    expect(feed.failure).toEqual({ sink: 'crawls', at: 'item 0', message: 'it took no item for 0.2 s while samples waited (--sink-timeout); the run went on without it' });
    await feed.push(5, 'item 5'); // returns: a sink given up is waited on no more (it never takes another item)
    expect(await feed.end()).toMatchObject({ sink: 'crawls', message: expect.stringContaining('took no item') });
  });

  it('a slow sink within its deadline is no failure: every item arrives, in order', async () => {
    const seen: number[] = [];
    const sink: Sink<number> = { name: 'slow', async consume(input) { for await (const n of input) { await new Promise((r) => setTimeout(r, 20)); seen.push(n); } return { name: 'slow', received: seen.length, written: seen.length }; } };
    const feed = new SinkFeed(sink, undefined, 2, deadlines);
    for (let i = 0; i < 10; i++) await feed.push(i, `item ${i}`);
    expect(await feed.end()).toEqual({ name: 'slow', received: 10, written: 10 });
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('a sink that throws is reported with the item it had, and the pushes after it go on', async () => {
    const sink: Sink<number> = { name: 'throws', async consume(input) { for await (const n of input) if (n === 1) throw new Error('disk full'); return { name: 'throws', received: 0, written: 0 }; } };
    const feed = new SinkFeed(sink, undefined, 2, deadlines);
    for (let i = 0; i < 6; i++) await feed.push(i, `item ${i}`);
    expect(await feed.end()).toEqual({ sink: 'throws', at: 'item 1', message: 'disk full' });
  });
});
