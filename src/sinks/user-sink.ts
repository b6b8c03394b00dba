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

/** How long a user's sink may take: to accept one item (its queue full), and to finish once the run has ended. */
export interface SinkDeadlines {
  itemMs: number;
  endMs: number;
}

/** --sink-timeout's default: a sink may take two minutes over one item, and two to finish. */
export const DEFAULT_SINK_DEADLINES: SinkDeadlines = { itemMs: 120_000, endMs: 120_000 };

/**
 * A run-long feed of one sink: items pushed as the run produces them (awaiting space: the sink's pace holds the run
 * back, as any sink's does), consumed by the sink over the whole run. A sink that throws is reported — its name, the
 * item it was given last, the error — and its feed is drained from then on, so the run and every built-in output go on.
 * So is one that hangs or crawls: past its deadline for an item, or for finishing, it is reported the same way and
 * aborted (its context's signal), and the run no longer waits for it.
 */
export class SinkFeed<T> {
  private readonly queue: BoundedQueue<{ item: T; label: string | null }>;
  private readonly controller = new AbortController();
  private last: string | null = null;
  private failed: SinkFailure | undefined;
  private readonly consumed: Promise<SinkReport | SinkFailure>;
  /** Items pushed and not yet taken, and the deadline for the sink to take the next of them. */
  private waiting = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly sink: Sink<T>,
    ctx?: StageContext,
    capacity = 16,
    private readonly deadlines: SinkDeadlines = DEFAULT_SINK_DEADLINES,
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
          feed.taken();
          feed.last = r.value.label;
          return { done: false, value: r.value.item };
        },
        return: async () => ({ done: true, value: undefined }),
      }),
    };
    this.consumed = sink.consume(view, ctx ?? createStageContext({ signal: this.controller.signal })).catch(async (err: unknown) => {
      clearTimeout(this.watchdog);
      const failure = this.fail((err as Error)?.message ?? String(err));
      for (let r = await items.next().catch(() => ({ done: true as const })); !r.done; r = await items.next().catch(() => ({ done: true as const }))); // drained: the producers go on
      return failure;
    });
  }

  get failure(): SinkFailure | undefined {
    return this.failed;
  }

  /** The first failure is the sink's: later ones (the abort it causes) are consequences. */
  private fail(message: string): SinkFailure {
    this.failed ??= { sink: this.sink.name, at: this.last, message };
    return this.failed;
  }

  /** Past a deadline: reported, the sink told to stop, and not waited for again. */
  private giveUp(message: string): SinkFailure {
    clearTimeout(this.watchdog);
    abandoned++;
    const failure = this.fail(message);
    this.controller.abort(new Error(message));
    return failure;
  }

  /** The sink has `itemMs` to take the next waiting item, from when it was pushed or the last one was taken. */
  private arm(): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => this.giveUp(`it took no item for ${seconds(this.deadlines.itemMs)} while samples waited (--sink-timeout); the run went on without it`), this.deadlines.itemMs);
    this.watchdog.unref(); // the run's end has a deadline of its own (end())
  }

  private taken(): void {
    this.waiting = Math.max(0, this.waiting - 1);
    if (this.waiting > 0) this.arm();
    else clearTimeout(this.watchdog);
  }

  async push(item: T, label: string | null): Promise<void> {
    if (this.failed) return;
    // A full queue waits for the sink's pace; one past its deadline is given up (the wait then ends at once).
    if (!(await this.queue.whenSpace(0).then(() => true, () => false)) || this.failed) return;
    this.queue.push({ item, label }, 0);
    if (this.waiting++ === 0) this.arm();
  }

  /** No more items: the sink finishes (flushes, closes) and reports, within its deadline. */
  async end(): Promise<SinkReport | SinkFailure> {
    if (!this.controller.signal.aborted) this.queue.close();
    const outcome = await withDeadline(this.consumed, this.deadlines.endMs);
    clearTimeout(this.watchdog);
    if (outcome === 'late') return this.giveUp(`it did not finish within ${seconds(this.deadlines.endMs)} of the run's end (--sink-timeout); what it wrote may be incomplete`);
    return this.failed ?? outcome;
  }
}

const seconds = (ms: number) => `${ms / 1000} s`;

let abandoned = 0;

/**
 * How many sinks this process stopped waiting for (past a deadline). Their code may still hold the event loop (a
 * timer, a socket): a command that is done exits instead of waiting on it.
 */
export function abandonedSinks(): number {
  return abandoned;
}

/** The promise's value, or 'late' once `ms` have passed. */
function withDeadline<V>(promise: Promise<V>, ms: number): Promise<V | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    // Held (not unref'd): a sink whose promise never settles must not let the process end before its deadline.
    timer = setTimeout(() => resolve('late'), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
