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
 */
export async function* abortable<T>(input: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  throwIfAborted(signal);
  const iterator = input[Symbol.asyncIterator]();
  const abort = abortPromise(signal);
  let finished = false;
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), abort.promise]);
      if (step.done) {
        finished = true;
        return;
      }
      yield step.value;
    }
  } finally {
    abort.dispose();
    if (!finished && iterator.return) {
      // The upstream may itself be stuck; do not wait for it, but do not lose its error either.
      iterator.return().catch(() => {});
    }
  }
}
