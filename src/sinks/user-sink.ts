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
 * What a sink module exports (as `default` or `sink`), as pino transports are: loaded by its specifier inside the
 * thread that runs the stages (a reprocess worker loads its own), so no function crosses a thread. `options` (zod)
 * checks what `--sink-option name.key=value` or an options file gives before anything runs. Several instances may
 * run at once (one per reprocess worker): a sink writing one store must allow that (SQLite: WAL and a busy timeout).
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
