/**
 * The conformance suite every sink passes before it is used (STYLE.md §8): empty input, flush at end,
 * a throwing input, abort, counts, and the stall test — the destination takes N writes and hangs, and the
 * source may produce at most N + capacity items. Shipped as `agent-roller/testing` for a user's own sinks (it runs under
 * vitest: `describeSinkConformance('my-sink', {...})` in a test file).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStageContext, openFileOutput, type OpenOutput, type Sink } from '../core/index.js';

export interface ConformanceEnv {
  dir: string;
  /** Every sink under test opens its outputs through this. */
  open: OpenOutput;
}

export interface SinkUnderTest<T> {
  create(env: ConformanceEnv): Sink<T>;
  item(i: number): T;
  /** What the sink wrote, read back from env.dir after consume() resolved. */
  readBack(env: ConformanceEnv): Promise<unknown[]>;
  /** What readBack must equal for these inputs. */
  expected(items: T[]): unknown[];
  /** Items the sink (and anything inside it) may hold beyond what its outputs accepted. */
  capacity: number;
  /**
   * `own`: the sink writes a destination of its own (a database, a service), not through env.open: the checks that
   * need its outputs in hand (closed outputs, a destination that stalls) are left to `isClosed` and skipped, said so.
   * A sink built with sinkFrom pulls one item per turn of its loop, so it reads nothing ahead of its destination.
   */
  outputs?: 'env' | 'own';
  /** `own` outputs: whether the sink closed its destination (checked after it ends on an input error). */
  isClosed?(env: ConformanceEnv): boolean | Promise<boolean>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A destination that accepts `accept` writes in all — across every file a sink opens on it (a document sink opens one
 * per item) — and then never completes another one.
 */
function stallingDestination(accept: number): () => Writable {
  let n = 0;
  return () =>
    new Writable({
      highWaterMark: 1,
      write(_chunk, _enc, callback) {
        if (n++ < accept) callback();
        // else: hang forever, like a full disk or a reader that stopped reading
      },
      final(callback) {
        if (n < accept) callback();
        // past the quota a close never completes either
      },
    });
}

async function* counted<T>(make: (i: number) => T, total: number, counter: { produced: number }): AsyncGenerator<T> {
  for (let i = 0; i < total; i++) {
    counter.produced++;
    yield make(i);
  }
}

export function describeSinkConformance<T>(name: string, sut: SinkUnderTest<T>): void {
  describe(`sink conformance: ${name}`, () => {
    let env: ConformanceEnv;
    let opened: Writable[];

    beforeEach(async () => {
      opened = [];
      const dir = await mkdtemp(join(tmpdir(), 'roller-conf-'));
      env = {
        dir,
        open: async (path) => {
          const w = await openFileOutput(path);
          opened.push(w);
          return w;
        },
      };
    });
    afterEach(async () => {
      await rm(env.dir, { recursive: true, force: true });
    });

    it('writes nothing but still completes on empty input', async () => {
      const report = await sut.create(env).consume(counted(sut.item, 0, { produced: 0 }), createStageContext());
      expect(report.received).toBe(0);
      expect(report.written).toBe(0);
      expect(await sut.readBack(env)).toEqual([]);
    });

    it('has flushed and closed everything when consume() resolves, and counts it', async () => {
      const items = Array.from({ length: 500 }, (_, i) => sut.item(i));
      const report = await sut.create(env).consume(counted(sut.item, 500, { produced: 0 }), createStageContext());
      expect(report.received).toBe(500);
      expect(report.written).toBe(500);
      expect(await sut.readBack(env)).toEqual(sut.expected(items));
      for (const w of opened) expect(w.writableFinished).toBe(true);
    });

    it('rejects with the input error, and closes its outputs', async () => {
      async function* failing(): AsyncGenerator<T> {
        yield sut.item(0);
        yield sut.item(1);
        throw new Error('input broke');
      }
      await expect(sut.create(env).consume(failing(), createStageContext())).rejects.toThrow('input broke');
      if (sut.outputs === 'own') {
        if (sut.isClosed) expect(await sut.isClosed(env)).toBe(true);
        return;
      }
      expect(opened.length).toBeGreaterThan(0);
      for (const w of opened) expect(w.destroyed || w.writableFinished).toBe(true);
    });

    // The stall test needs the outputs in hand: a sink writing its own destination (a database) has no such test.
    if (sut.outputs !== 'own') it('stall test: a destination that takes N items and hangs lets the source produce at most N + capacity', async () => {
      const N = 7;
      const stalled: Writable[] = [];
      const destination = stallingDestination(N);
      const stallEnv: ConformanceEnv = {
        dir: env.dir,
        open: async (path) => {
          // The file exists, as it would on a disk that then fills up (a document is renamed into place).
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, '');
          const w = destination();
          stalled.push(w);
          return w;
        },
      };
      const counter = { produced: 0 };
      const controller = new AbortController();
      const ctx = createStageContext({ signal: controller.signal });
      const running = sut.create(stallEnv).consume(counted(sut.item, 100_000, counter), ctx);
      running.catch(() => {});
      // Wait until production stops moving: unchanged over 10 looks 50 ms apart (a loaded machine may pause a
      // healthy pipeline for one look or two; it does not pause it for half a second).
      let last = -1;
      for (let still = 0; still < 10; ) {
        await sleep(50);
        still = counter.produced === last ? still + 1 : 0;
        last = counter.produced;
      }
      expect(counter.produced).toBeGreaterThanOrEqual(N);
      expect(counter.produced).toBeLessThanOrEqual(N + sut.capacity);
      // Abort unblocks it: nothing hangs.
      controller.abort(new Error('stop the stalled sink'));
      await expect(running).rejects.toThrow('stop the stalled sink');
    });

    it('abort ends a running consume promptly with the abort reason', async () => {
      const controller = new AbortController();
      const ctx = createStageContext({ signal: controller.signal });
      async function* endless(): AsyncGenerator<T> {
        for (let i = 0; ; i++) {
          if (i === 50) setTimeout(() => controller.abort(new Error('user pressed ctrl-c')), 0);
          yield sut.item(i);
          if (i % 10 === 0) await sleep(1);
        }
      }
      const started = Date.now();
      await expect(sut.create(env).consume(endless(), ctx)).rejects.toThrow('user pressed ctrl-c');
      expect(Date.now() - started).toBeLessThan(5000);
      for (const w of opened) expect(w.destroyed || w.writableFinished).toBe(true);
    });
  });
}
