import { describe, expect, it } from 'vitest';
import { createStageContext, EncodedLine, fanOut, type Sink, type SinkReport } from '../../../src/core/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sink that takes `delayMs` per item and records the largest backlog it was ever offered. */
function slowSink(name: string, delayMs: number): Sink<unknown> & { seen: unknown[] } {
  const seen: unknown[] = [];
  return {
    name,
    seen,
    async consume(input): Promise<SinkReport> {
      for await (const item of input) {
        seen.push(item);
        if (delayMs > 0) await sleep(delayMs);
      }
      return { name, received: seen.length, written: seen.length };
    },
  };
}

async function* produce(n: number, size: number, counter: { produced: number }) {
  for (let i = 0; i < n; i++) {
    counter.produced++;
    yield EncodedLine.of({ i, pad: 'x'.repeat(size) });
  }
}

describe('fanOut', () => {
  it('with one slow sink, the producer never runs ahead of it by more than the queue capacity', async () => {
    const counter = { produced: 0 };
    const fast = slowSink('fast', 0);
    const slow = slowSink('slow', 2);
    let maxLead = 0;
    const watch = setInterval(() => (maxLead = Math.max(maxLead, counter.produced - slow.seen.length)), 1);
    const report = await fanOut([fast, slow], { capacity: { items: 5 } }).consume(produce(200, 10, counter), createStageContext());
    clearInterval(watch);
    expect(report.received).toBe(200);
    expect(fast.seen).toHaveLength(200);
    expect(slow.seen).toHaveLength(200);
    // queue (5) + the item the slow sink holds (1)
    expect(maxLead).toBeLessThanOrEqual(6);
    // Both sinks saw the very same objects: serialized once, shared.
    expect(fast.seen.every((x, i) => x === slow.seen[i])).toBe(true);
  });

  it('bounds the queue by bytes as well as items (a large record waits for an empty queue)', async () => {
    const counter = { produced: 0 };
    const slow = slowSink('slow', 3);
    let maxLead = 0;
    const watch = setInterval(() => (maxLead = Math.max(maxLead, counter.produced - slow.seen.length)), 1);
    // 10 KB records, 25 KB budget: at most 2 queued + 1 held, even though 100 item slots exist.
    await fanOut([slow], { capacity: { items: 100, bytes: 25_000 } }).consume(produce(60, 10_000, counter), createStageContext());
    clearInterval(watch);
    expect(slow.seen).toHaveLength(60);
    expect(maxLead).toBeLessThanOrEqual(4);
  });

  it("'drop-newest' branches never slow the others, and their drops are counted", async () => {
    const counter = { produced: 0 };
    const main = slowSink('main', 0);
    const preview = slowSink('preview', 5);
    const ctx = createStageContext();
    const report = await fanOut([main, { sink: preview, whenFull: 'drop-newest' }], { capacity: { items: 2 } }).consume(
      produce(300, 10, counter),
      ctx,
    );
    expect(main.seen).toHaveLength(300);
    expect(preview.seen.length).toBeLessThan(300);
    expect(report.dropped).toBe(300 - preview.seen.length);
    expect(ctx.counters.get('preview', 'dropped')).toBe(report.dropped);
  });

  it('a failing branch stops the producer and the other branches, and consume() rejects with its error', async () => {
    const counter = { produced: 0 };
    const healthy = slowSink('healthy', 1);
    const failing: Sink<unknown> = {
      name: 'failing',
      async consume(input) {
        let n = 0;
        for await (const _ of input) if (++n === 10) throw new Error('disk full');
        return { name: 'failing', received: n, written: n };
      },
    };
    await expect(fanOut([healthy, failing], { capacity: { items: 4 } }).consume(produce(1_000_000, 10, counter), createStageContext())).rejects.toThrow(
      'disk full',
    );
    expect(counter.produced).toBeLessThan(50);
  });

  it('an input error reaches every branch and is what consume() rejects with', async () => {
    const a = slowSink('a', 0);
    async function* broken() {
      yield 1;
      throw new Error('source died');
    }
    await expect(fanOut([a, slowSink('b', 0)]).consume(broken(), createStageContext())).rejects.toThrow('source died');
  });
});
