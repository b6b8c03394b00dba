/** A request body this small (in all) never waits behind larger ones for room. */
export const SMALL_BODY_BYTES = 64 << 10;

/**
 * Bytes held in memory across many holders, granted first come, first served. The proxy holds request bodies with
 * it: a body that does not fit waits unread, so TCP holds its client back (no 503 to retry, no bytes read only to be
 * dropped); one that could never fit is the caller's to refuse.
 */
export class ByteBudget {
  held = 0;
  private readonly queue: { bytes: number; grant: () => void }[] = [];

  /**
   * `reserve`: bytes past the limit that small bodies (SMALL_BODY_BYTES at most) take at once, without waiting behind
   * large ones in the queue: a model call of a few kilobytes is never held up for seconds by others' megabytes.
   */
  constructor(
    readonly limit: number,
    readonly reserve = Math.max(1 << 20, Math.floor(limit / 16)),
  ) {}

  /** Takes `bytes` of a small body from the limit or the reserve, whoever waits (false: even the reserve is full). */
  tryTakeSmall(bytes: number): boolean {
    if (this.held + bytes > this.limit + this.reserve) return false;
    this.held += bytes;
    return true;
  }

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
