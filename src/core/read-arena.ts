/**
 * One buffer that a sequence of jobs reads its files into, one job at a time, instead of a fresh buffer
 * per read. A fresh multi-megabyte buffer is fresh memory, every page faulted in and given back (see
 * scratch-buffers.ts); the arena's pages stay mapped from one job to the next.
 *
 * The contract that makes it safe: views handed out by take() are valid until the next reset(), and
 * reset() is called only when the job that took them is over and kept nothing (a reprocess worker
 * resets before each sample; what a sample read is written out and dropped before its promise resolves).
 */
export class ReadArena {
  private buf: Buffer;
  private used = 0;

  constructor(
    initialBytes = 16 << 20,
    /** A job that needs more than this reads into its own buffers: the arena never pins a giant file's size. */
    private readonly maxBytes = 256 << 20,
  ) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes); // its own memory, never a slice of Node's shared pool
  }

  /** A new job starts: every view taken before is invalid from here on. */
  reset(): void {
    this.used = 0;
  }

  /**
   * Makes room for `bytes` more before they are read, so a file that outgrows the arena is read into one
   * new buffer at once: growing in the middle of it would leave the old buffer's pages written and held (by
   * the views into it) until a GC, ~16 MB per worker on the first sample of the bench archive.
   */
  reserve(bytes: number): void {
    if (this.buf.length - this.used < bytes) this.grow(bytes);
  }

  /**
   * `bytes` of the arena, right after the previous take. When the arena is too small it grows (the old buffer
   * lives on as long as its views do); past maxBytes the bytes are a buffer of their own.
   */
  take(bytes: number): Buffer {
    if (this.buf.length - this.used < bytes && !this.grow(bytes)) return Buffer.allocUnsafe(bytes);
    const view = this.buf.subarray(this.used, this.used + bytes);
    this.used += bytes;
    return view;
  }

  /** A new buffer with room for `bytes` (the old one lives on as long as its views do); false past maxBytes. */
  private grow(bytes: number): boolean {
    const want = Math.max(this.buf.length * 2, this.used + bytes);
    if (want > this.maxBytes) return false;
    this.buf = Buffer.allocUnsafeSlow(want);
    this.used = 0;
    return true;
  }

  /** Gives back the unused end of the last take (a read that returned fewer bytes than asked). */
  giveBack(view: Buffer, usedBytes: number): void {
    if (view.buffer === this.buf.buffer && view.byteOffset + view.length === this.buf.byteOffset + this.used) this.used -= view.length - usedBytes;
  }
}
