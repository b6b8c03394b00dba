import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compose,
  createJsonlSink,
  encodeJsonlLines,
  mapStage,
  runPipeline,
  type Sink,
  type Source,
} from '../../../src/core/index.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('pipe');

const numbers = (n: number): Source<number> =>
  async function* (ctx) {
    for (let i = 0; i < n; i++) {
      if (ctx.signal.aborted) return;
      yield i;
    }
  };

describe('runPipeline', () => {
  it('runs source → transforms → two sinks and reports counts per stage', async () => {
    const report = await runPipeline({
      name: 'demo',
      source: numbers(100),
      transforms: [mapStage('keep-even', (n: number) => (n % 2 === 0 ? { n } : undefined)), encodeJsonlLines],
      sinks: [createJsonlSink({ path: join(tmp.path, 'a.jsonl') }), createJsonlSink({ path: join(tmp.path, 'b.jsonl') })],
    });
    const a = await readFile(join(tmp.path, 'a.jsonl'), 'utf8');
    expect(a).toBe(await readFile(join(tmp.path, 'b.jsonl'), 'utf8'));
    expect(a.trim().split('\n')).toHaveLength(50);
    expect(report.sinks).toHaveLength(2);
    expect(report.counters['keep-even']).toEqual({ received: 100, emitted: 50, rejected: 0, dropped: 50 });
    expect(report.sinks[0]!.files![join(tmp.path, 'a.jsonl')]!.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the first fatal error tears everything down: a stuck source does not hang the run', async () => {
    let returned = false;
    const stuck: Source<number> = async function* () {
      try {
        yield 1;
        await new Promise(() => {}); // never resolves, never looks at the signal
      } finally {
        returned = true;
      }
    };
    // It fails while the fan-out is waiting on the stuck source for the next item.
    const failing: Sink<number> = {
      name: 'failing',
      async consume(input) {
        for await (const _ of input) {
          await new Promise((r) => setTimeout(r, 50));
          throw new Error('sink exploded');
        }
        return { name: 'failing', received: 0, written: 0 };
      },
    };
    const idle: Sink<number> = {
      name: 'idle',
      async consume(input) {
        let n = 0;
        for await (const _ of input) n++;
        return { name: 'idle', received: n, written: n };
      },
    };
    await expect(runPipeline({ source: stuck, sinks: [failing, idle] })).rejects.toThrow('sink exploded');
    expect(returned).toBe(false); // it really was stuck; the run did not wait for it
  });

  it('a stage error is the rejection cause, not a generic abort', async () => {
    const explode = mapStage('explode', (n: number) => {
      if (n === 5) throw new Error('bad record 5');
      return n;
    });
    await expect(
      runPipeline({ source: numbers(10), transforms: [compose(explode, encodeJsonlLines)], sinks: createJsonlSink({ path: join(tmp.path, 'c.jsonl') }) }),
    ).rejects.toThrow('bad record 5');
  });

  it("the caller's signal aborts the run with its reason", async () => {
    const controller = new AbortController();
    const endless: Source<number> = async function* () {
      for (let i = 0; ; i++) {
        if (i === 1000) controller.abort(new Error('interrupted by user'));
        yield i;
        if (i % 100 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    await expect(
      runPipeline({ source: endless, transforms: [encodeJsonlLines], sinks: createJsonlSink({ path: join(tmp.path, 'd.jsonl') }) }, { signal: controller.signal }),
    ).rejects.toThrow('interrupted by user');
  });
});

describe('compose', () => {
  it('fuses adjacent maps into one loop with the same results and per-stage counts', async () => {
    const { createStageContext } = await import('../../../src/core/index.js');
    const stages = [
      mapStage('inc', (n: number) => n + 1),
      mapStage('odd-only', (n: number) => (n % 2 === 1 ? n : undefined)),
      mapStage('square', (n: number) => n * n),
    ] as const;
    async function* src() {
      for (let i = 0; i < 10; i++) yield i;
    }
    const fusedCtx = createStageContext();
    const fused: number[] = [];
    for await (const x of compose(...stages)(src(), fusedCtx)) fused.push(x as number);
    const oneByOne: number[] = [];
    const plainCtx = createStageContext();
    for await (const x of stages[2](stages[1](stages[0](src(), plainCtx), plainCtx), plainCtx)) oneByOne.push(x);
    expect(fused).toEqual([1, 9, 25, 49, 81]);
    expect(fused).toEqual(oneByOne);
    expect(fusedCtx.counters.snapshot()).toEqual(plainCtx.counters.snapshot());
  });
});
