import { abortable, abortPromise } from './abort.js';
import { BoundedQueue, type Capacity } from './bounded-queue.js';
import { withSignal } from './context.js';
import { abortReason } from './errors.js';
import type { Sink, SinkReport, StageContext } from './stage.js';

export type WhenFull = 'block' | 'drop-newest';

export interface FanOutBranch<T> {
  sink: Sink<T>;
  /** 'block' (default): this sink sets the pace. 'drop-newest': for optional sinks; drops are counted. */
  whenFull?: WhenFull;
}

export interface FanOutOptions<T> {
  name?: string;
  /** Per branch. Defaults: 16 items, 16 MiB (more does not speed up the bench; it only holds memory). */
  capacity?: Partial<Capacity>;
  /** Bytes an item weighs against capacity.bytes; see `sizeOfItem` for the default. */
  sizeOf?: (item: T) => number;
  /** After a failure, how long branches get to close their outputs before consume() rejects. Default 2000 ms. */
  teardownGraceMs?: number;
}

export const DEFAULT_FANOUT_CAPACITY: Capacity = { items: 16, bytes: 16 << 20 };

/**
 * Default weight of an item: the byte length of bytes and strings, an explicit numeric `byteLength`
 * (EncodedLine has one), else 1. Objects of unknown size are bounded by the item count only;
 * pass `sizeOf` when that is not enough.
 */
export function sizeOfItem(item: unknown): number {
  if (typeof item === 'string') return item.length;
  if (item instanceof Uint8Array) return item.byteLength;
  if (item !== null && typeof item === 'object') {
    const n = (item as { byteLength?: unknown }).byteLength;
    if (typeof n === 'number') return n;
  }
  return 1;
}

/**
 * One stream into several sinks, each behind its own bounded queue. The producer waits for an item
 * slot in every blocking branch before it pulls the next item, so a sink that has taken N items and
 * hung lets the source produce at most N + capacity.items. Items are shared, not copied: serialize
 * once upstream (EncodedLine) and every sink writes the same bytes.
 */
export function fanOut<T>(branches: readonly (Sink<T> | FanOutBranch<T>)[], options: FanOutOptions<T> = {}): Sink<T> {
  const name = options.name ?? 'fan-out';
  const capacity: Capacity = { ...DEFAULT_FANOUT_CAPACITY, ...options.capacity };
  const sizeOf = options.sizeOf ?? sizeOfItem;
  const normalized = branches.map((b): Required<FanOutBranch<T>> =>
    'consume' in b ? { sink: b, whenFull: 'block' } : { sink: b.sink, whenFull: b.whenFull ?? 'block' },
  );
  if (capacity.items < 1 || capacity.bytes < 1) throw new RangeError(`${name}: capacity must be at least 1 item and 1 byte`);

  return {
    name,
    async consume(input: AsyncIterable<T>, ctx: StageContext): Promise<SinkReport> {
      // A failing branch must stop the others and the producer: one controller for the whole fan-out.
      const controller = new AbortController();
      const forward = () => controller.abort(abortReason(ctx.signal));
      if (ctx.signal.aborted) forward();
      else ctx.signal.addEventListener('abort', forward, { once: true });
      const branchCtx = withSignal(ctx, controller.signal);

      const queues = normalized.map(() => new BoundedQueue<T>(capacity, controller.signal));
      const done = normalized.map(() => false);
      const dropped = normalized.map(() => 0);
      const running = normalized.map(({ sink }, i) =>
        sink.consume(queues[i]!.drain(), branchCtx).then(
          (report) => {
            done[i] = true;
            return report;
          },
          (err: unknown) => {
            controller.abort(err instanceof Error ? err : new Error(String(err)));
            throw err;
          },
        ),
      );
      for (const p of running) p.catch(() => {}); // observed below; avoid unhandled rejections meanwhile

      let received = 0;
      const abort = abortPromise(controller.signal);
      try {
        const iterator = abortable(input, controller.signal);
        for (;;) {
          if (done.every(Boolean)) {
            await iterator.return(undefined);
            break;
          }
          for (let i = 0; i < queues.length; i++) {
            const q = queues[i]!;
            // Check before awaiting: an await per item per branch costs more than the whole hop.
            if (!done[i] && normalized[i]!.whenFull === 'block' && !q.hasSpace(0)) await q.whenSpace(0);
          }
          const step = await iterator.next();
          if (step.done) break;
          received++;
          const item = step.value;
          const size = sizeOf(item);
          for (let i = 0; i < queues.length; i++) {
            if (done[i]) continue;
            const queue = queues[i]!;
            if (normalized[i]!.whenFull === 'block') {
              if (!queue.hasSpace(size)) await queue.whenSpace(size);
              queue.push(item, size);
            } else if (queue.hasSpace(size)) {
              queue.push(item, size);
            } else {
              dropped[i]!++;
              ctx.counters.add(normalized[i]!.sink.name, 'dropped');
            }
          }
        }
        for (const q of queues) q.close();
        const reports = await Promise.race([Promise.all(running), abort.promise]);
        const totalDropped = dropped.reduce((a, b) => a + b, 0);
        return { name, received, written: received, dropped: totalDropped, branches: reports };
      } catch (err) {
        const cause = controller.signal.aborted ? abortReason(controller.signal) : (err as Error);
        if (!controller.signal.aborted) controller.abort(cause);
        await settleWithin(running, options.teardownGraceMs ?? 2000);
        throw cause;
      } finally {
        abort.dispose();
        ctx.signal.removeEventListener('abort', forward);
        for (const q of queues) q.dispose();
      }
    },
  };
}

/** Wait for the promises to settle, but never longer than `ms` (a stuck branch must not hang us). */
export async function settleWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(promises), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
