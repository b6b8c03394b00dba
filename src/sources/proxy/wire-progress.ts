/**
 * The wire log's progress signal: a SharedArrayBuffer the writer updates after every write and a follower — in the
 * same thread or a worker — reads (WireLogWriter.progress, an Int32Array over it, with two Float64 fields behind).
 */

/** Index of the fields of WireLogWriter.progress (an Int32Array over a SharedArrayBuffer). */
export const PROGRESS_GENERATION = 0;
export const PROGRESS_CLOSED = 1;
/** Exchanges the proxy has open right now (a reader that yields waits while there are any). */
export const PROGRESS_OPEN_EXCHANGES = 2;
/** 1 when the writer uses direct I/O: a follower then reads with it too, and the log never enters the page cache. */
export const PROGRESS_DIRECT = 3;
/** Byte offset, in progress.buffer, of a Float64: epoch ms of the last completed write. */
export const PROGRESS_LAST_WRITE_BYTE = 16;
/**
 * Byte offset, in progress.buffer, of a Float64: how many bytes of the log are complete on disk. A follower reads no
 * further: with direct I/O the file can hold a padded last block beyond it, which the next write rewrites.
 */
export const PROGRESS_COMMITTED_BYTE = 24;

/** How many bytes of the log behind `progress` are written (a follower reads no further). */
export function committedBytes(progress: Int32Array): number {
  return new Float64Array(progress.buffer, PROGRESS_COMMITTED_BYTE, 1)[0]!;
}

/** When the writer behind `progress` last completed a write (epoch ms). */
export function lastWriteAt(progress: Int32Array): number {
  return new Float64Array(progress.buffer, PROGRESS_LAST_WRITE_BYTE, 1)[0]!;
}
