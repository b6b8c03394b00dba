/**
 * Items settled out of order (samples finishing on several lanes), read back in index order 0..total-1: an index
 * settled with null contributes nothing. What is held waits only until the indexes before it are settled.
 */
export class InOrder<T> implements AsyncIterable<T> {
  private readonly held = new Map<number, T | null>();
  private next = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly total: number) {}

  settle(index: number, item: T | null): void {
    if (index < this.next || this.held.has(index)) return; // settled already
    this.held.set(index, item);
    this.wake?.();
  }

  /** Every index not settled yet, as nothing (an interrupted run: the rest will not come). */
  settleRest(): void {
    for (let i = this.next; i < this.total; i++) if (!this.held.has(i)) this.held.set(i, null);
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    while (this.next < this.total) {
      if (!this.held.has(this.next)) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const item = this.held.get(this.next)!;
      this.held.delete(this.next++);
      if (item !== null) yield item;
    }
  }
}
