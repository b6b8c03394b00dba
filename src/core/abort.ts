import { abortReason } from './errors.js';

/**
 * A promise that rejects when `signal` aborts, plus a `dispose` that removes the listener
 * (a listener per item would leak on long runs).
 */
export function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose(): void } {
  if (signal.aborted) {
    const promise = Promise.reject(abortReason(signal));
    promise.catch(() => {});
    return { promise, dispose() {} };
  }
  let onAbort: () => void = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => {});
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortReason(signal);
}

/**
 * Wraps an async iterable so that a pending `next()` gives way to an abort: a stuck upstream
 * cannot hold the pipeline open. On abort the upstream iterator is asked to return (best effort).
 *
 * Not `Promise.race([next, abortPromise])`: every race adds a reaction to the long-lived abort
 * promise, and each reaction keeps its settled result (the item) reachable until the abort promise
 * settles — a leak of every item that ever passed. One listener, one deferred per item instead.
 */
export async function* abortable<T>(input: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  throwIfAborted(signal);
  const iterator = input[Symbol.asyncIterator]();
  let rejectPending: ((err: Error) => void) | undefined;
  const onAbort = () => rejectPending?.(abortReason(signal));
  signal.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  try {
    for (;;) {
      const step = await new Promise<IteratorResult<T>>((resolve, reject) => {
        rejectPending = reject;
        iterator.next().then(resolve, reject);
      });
      rejectPending = undefined;
      if (step.done) {
        finished = true;
        return;
      }
      yield step.value;
      throwIfAborted(signal);
    }
  } finally {
    rejectPending = undefined;
    signal.removeEventListener('abort', onAbort);
    if (!finished && iterator.return) {
      // The upstream may itself be stuck; do not wait for it, but do not lose its error either.
      iterator.return().catch(() => {});
    }
  }
}

/** Marks an iterable whose every wait already gives way to the signal (no abortable() wrapper needed). */
export const ABORT_AWARE = Symbol('roller.abortAware');

export function markAbortAware<T extends object>(iterable: T): T {
  Object.defineProperty(iterable, ABORT_AWARE, { value: true });
  return iterable;
}

/** `input` itself when it is abort-aware, else wrapped by abortable(). */
export function abortableInput<T>(input: AsyncIterable<T>, signal: AbortSignal): AsyncIterable<T> {
  return (input as { [ABORT_AWARE]?: boolean })[ABORT_AWARE] ? input : abortable(input, signal);
}
