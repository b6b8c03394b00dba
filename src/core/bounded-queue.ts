import { markAbortAware } from './abort.js';
import { abortReason } from './errors.js';

export interface Capacity {
  /** At most this many items wait in the queue. */
  items: number;
  /** At most this many bytes wait (an item larger than this still passes through an empty queue). */
  bytes: number;
}

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/**
 * A single-producer, single-consumer queue bounded by items and bytes. The producer awaits
 * `whenSpace(size)`; the consumer iterates. Both waits give way to the signal.
 */
export class BoundedQueue<T> {
  private readonly buffer: { item: T; size: number }[] = [];
  private head = 0;
  private queuedBytes = 0;
  private closed = false;
  private failure: Error | undefined;
  private consumerWaiter: Waiter | undefined;
  private producerWaiter: Waiter | undefined;
  private readonly onAbort = () => this.fail(abortReason(this.signal));

  constructor(
    readonly capacity: Capacity,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  get length(): number {
    return this.buffer.length - this.head;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  /** True when an item of `size` bytes may be pushed without exceeding capacity. */
  hasSpace(size: number): boolean {
    if (this.length >= this.capacity.items) return false;
    return this.length === 0 || this.queuedBytes + size <= this.capacity.bytes;
  }

  /** Resolves once an item of `size` bytes fits (size 0: once an item slot is free). */
  async whenSpace(size = 0): Promise<void> {
    while (!this.hasSpace(size)) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve, reject) => (this.producerWaiter = { resolve, reject }));
    }
    if (this.failure) throw this.failure;
  }

  push(item: T, size: number): void {
    if (this.failure) throw this.failure;
    this.buffer.push({ item, size });
    this.queuedBytes += size;
    this.wakeConsumer();
  }

  close(): void {
    this.closed = true;
    this.wakeConsumer();
  }

  /** Fails both sides; pending and future waits reject with `err`. */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.signal.removeEventListener('abort', this.onAbort);
    const c = this.consumerWaiter;
    const p = this.producerWaiter;
    this.consumerWaiter = this.producerWaiter = undefined;
    c?.reject(err);
    p?.reject(err);
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  /** The consumer side; abort-aware (its waits reject when the signal aborts). */
  drain(): AsyncGenerator<T> {
    return markAbortAware(this.items());
  }

  private async *items(): AsyncGenerator<T> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.length > 0) {
        const slot = this.buffer[this.head]!;
        this.buffer[this.head] = undefined as never; // let the item be collected
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.buffer.length) {
          this.buffer.splice(0, this.head);
          this.head = 0;
        }
        this.queuedBytes -= slot.size;
        this.wakeProducer();
        yield slot.item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve, reject) => (this.consumerWaiter = { resolve, reject }));
    }
  }

  private wakeConsumer(): void {
    const w = this.consumerWaiter;
    this.consumerWaiter = undefined;
    w?.resolve();
  }

  private wakeProducer(): void {
    const w = this.producerWaiter;
    this.producerWaiter = undefined;
    w?.resolve();
  }
}
