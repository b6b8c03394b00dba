/**
 * Bytes held in memory across many holders, granted first come, first served. The proxy holds request bodies with
 * it: a body that does not fit waits unread, so TCP holds its client back (no 503 to retry, no bytes read only to be
 * dropped); one that could never fit is the caller's to refuse.
 */
export class ByteBudget {
  held = 0;
  private readonly queue: { bytes: number; grant: () => void }[] = [];

  constructor(readonly limit: number) {}

  /** Takes `bytes` if they fit now and nobody waits before them. */
  tryTake(bytes: number): boolean {
    if (this.queue.length > 0 || this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  /** `grant` is called once `bytes` are taken (at once, if they fit); the function returned gives up a wait. */
  take(bytes: number, grant: () => void): () => void {
    const entry = { bytes, grant };
    this.queue.push(entry);
    this.admit();
    return () => {
      const i = this.queue.indexOf(entry);
      if (i >= 0) this.queue.splice(i, 1);
      this.admit(); // a large body leaving the head of the queue may let smaller ones behind it in
    };
  }

  give(bytes: number): void {
    this.held -= bytes;
    this.admit();
  }

  private admit(): void {
    while (this.queue.length > 0 && this.held + this.queue[0]!.bytes <= this.limit) {
      const next = this.queue.shift()!;
      this.held += next.bytes;
      next.grant();
    }
  }
}
