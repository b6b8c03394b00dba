import type { z } from 'zod';
import { BoundedQueue } from '../core/bounded-queue.js';
import { createStageContext } from '../core/context.js';
import type { Sink, SinkReport, StageContext } from '../core/stage.js';
import type { Call } from '../schemas/call.js';
import type { FinishedSample } from '../schemas/finished-sample.js';

/** The sinks a user's module gives for a run: of attributed calls, of finished samples (in request order), or both. */
export interface UserSinks {
  calls?: Sink<Call>;
  samples?: Sink<FinishedSample>;
}

/**
 * What a sink module exports (as `default` or `sink`), as pino transports are: loaded by its specifier in the
 * pipeline's main thread, which feeds it what the samples published (reprocess too: its workers only project), so no
 * function crosses a thread and one instance sees the whole run in order. `options` (zod) checks what
 * `--sink-option name.key=value` or an options file gives before anything runs. Another run may write the same store
 * at the same time: a sink writing one must allow that (SQLite: WAL and a busy timeout).
 */
export interface SinkModule<O = unknown> {
  name?: string;
  options?: z.ZodType<O>;
  create(options: O): UserSinks | Promise<UserSinks>;
}

/** For a sink module's authors: the type, checked. */
export function defineSink<O>(definition: SinkModule<O>): SinkModule<O> {
  return definition;
}

/** What a sink's loop is given besides its items. */
export interface SinkLoopContext {
  /** Aborted when the run stops (Ctrl-C, a fatal error): the items end with its reason, and so should any wait. */
  signal: AbortSignal;
}

/**
 * A sink from a loop, as pino-abstract-transport makes a transport: the author writes
 * `for await (const item of items) { ... }` and the helper owns the rest. Items are pulled one at a time as the loop
 * asks (a slow loop holds the run back, nothing is read ahead); an abort ends the items with its reason; an error of
 * the input reaches the loop as a throw; `close` runs once however the loop ends (after it, with the error if any);
 * the report counts what the loop took.
 */
export function sinkFrom<T>(name: string, loop: (items: AsyncIterable<T>, ctx: SinkLoopContext) => Promise<void>, hooks: { close?(error?: unknown): void | Promise<void> } = {}): Sink<T> {
  return {
    name,
    async consume(input, ctx) {
      let received = 0;
      const signal = ctx.signal;
      async function* items(): AsyncGenerator<T> {
        const it = input[Symbol.asyncIterator]();
        try {
          for (;;) {
            signal.throwIfAborted();
            const next = await untilAborted(it.next(), signal);
            if (next.done) return;
            received++;
            yield next.value;
          }
        } finally {
          // The source is let go (an early break, an abort) without waiting on it: a stalled one would never answer.
          void Promise.resolve(it.return?.()).catch(() => {});
        }
      }
      let failure: unknown;
      try {
        await loop(items(), { signal });
        signal.throwIfAborted();
      } catch (err) {
        failure = err;
      }
      await hooks.close?.(failure);
      if (failure !== undefined) throw failure;
      return { name, received, written: received };
    },
  };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<V>(promise: Promise<V>, signal: AbortSignal): Promise<V> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** A user sink's failure: which sink, at which item (the sample it was given last), and why. */
export interface SinkFailure {
  sink: string;
  at: string | null;
  message: string;
}

/**
 * A run-long feed of one sink: items pushed as the run produces them (awaiting space: the sink's pace holds the run
 * back, as any sink's does), consumed by the sink over the whole run. A sink that throws is reported — its name, the
 * item it was given last, the error — and its feed is drained from then on, so the run and every built-in output go on.
 */
export class SinkFeed<T> {
  private readonly queue: BoundedQueue<{ item: T; label: string | null }>;
  private readonly controller = new AbortController();
  private last: string | null = null;
  private failed: SinkFailure | undefined;
  readonly done: Promise<SinkReport | SinkFailure>;

  constructor(
    sink: Sink<T>,
    ctx: StageContext = createStageContext(),
    capacity = 16,
  ) {
    this.queue = new BoundedQueue({ items: capacity, bytes: Number.MAX_SAFE_INTEGER }, this.controller.signal);
    const items = this.queue.drain();
    const feed = this;
    // The sink's loop may end early (a throw, a return): its iterator's return() must not close the queue's.
    const view: AsyncIterable<T> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          const r = await items.next();
          if (r.done) return { done: true, value: undefined };
          feed.last = r.value.label;
          return { done: false, value: r.value.item };
        },
        return: async () => ({ done: true, value: undefined }),
      }),
    };
    this.done = sink.consume(view, ctx).catch(async (err: unknown) => {
      this.failed = { sink: sink.name, at: this.last, message: (err as Error)?.message ?? String(err) };
      for (let r = await items.next(); !r.done; r = await items.next()); // drained: the producers go on
      return this.failed;
    });
  }

  get failure(): SinkFailure | undefined {
    return this.failed;
  }

  async push(item: T, label: string | null): Promise<void> {
    if (this.failed) return;
    await this.queue.whenSpace(0);
    this.queue.push({ item, label }, 0);
  }

  /** No more items: the sink finishes (flushes, closes) and reports. */
  end(): Promise<SinkReport | SinkFailure> {
    this.queue.close();
    return this.done;
  }
}
