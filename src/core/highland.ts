/// <reference types="highland" preserve="true" />
/**
 * The highland composition surface for scripts (DESIGN.md §3): every stage can be used as
 *   _(source).through(through(transform)).through(through(sink))
 * This is the only module that imports highland. Hot paths do not go through it per item: the
 * engine's own iteration is faster (see bench/engine), highland is for convenience in scripts.
 */
import _ from 'highland';
import { createStageContext } from './context.js';
import type { Sink, SinkReport, Source, StageContext, Transform } from './stage.js';

export type HighlandStream<T> = Highland.Stream<T>;

/** A lazy highland stream over an async iterable: one `next()` per item highland asks for. */
export function toHighland<T>(iterable: AsyncIterable<T>): Highland.Stream<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  let ended = false;
  const stream = _<T>((push, next) => {
    iterator.next().then(
      (step) => {
        if (step.done) {
          ended = true;
          push(null, _.nil);
        } else {
          push(null, step.value);
          next();
        }
      },
      (err: unknown) => {
        ended = true;
        push(err as Error);
        push(null, _.nil);
      },
    );
  });
  // When a consumer stops early, let the iterator close its files.
  const withDestroy = stream as Highland.Stream<T> & { onDestroy?: (fn: () => void) => unknown };
  withDestroy.onDestroy?.(() => {
    if (!ended) iterator.return?.().catch(() => {});
  });
  return stream;
}

/** An async iterable over a highland stream, pulling one value at a time (backpressure kept). */
export async function* fromHighland<T>(stream: Highland.Stream<T>): AsyncGenerator<T> {
  let ended = false;
  try {
    for (;;) {
      const value = await new Promise<T | Highland.Nil>((resolve, reject) => {
        stream.pull((err, x) => (err ? reject(err) : resolve(x as T | Highland.Nil)));
      });
      if (_.isNil(value)) {
        ended = true;
        return;
      }
      yield value as T;
    }
  } finally {
    if (!ended) stream.destroy();
  }
}

/** A source as a highland stream. */
export function fromSource<T>(source: Source<T>, ctx: StageContext = createStageContext()): Highland.Stream<T> {
  return toHighland(source(ctx));
}

/**
 * A transform or a sink as a function for highland's `.through()`. A transform gives a stream of its
 * outputs; a sink gives a stream of one value, its report. The returned function is generic in its
 * input (`S extends I`) because highland's Stream<T> is invariant: a Sink<unknown> must still accept a
 * Stream<EncodedLine>.
 */
export function through<I, O>(stage: Transform<I, O>, ctx?: StageContext): <S extends I>(s: Highland.Stream<S>) => Highland.Stream<O>;
export function through<I>(stage: Sink<I>, ctx?: StageContext): <S extends I>(s: Highland.Stream<S>) => Highland.Stream<SinkReport>;
export function through<I, O>(
  stage: Transform<I, O> | Sink<I>,
  ctx: StageContext = createStageContext(),
): (s: Highland.Stream<I>) => Highland.Stream<O> | Highland.Stream<SinkReport> {
  if (typeof stage === 'function') return (s) => toHighland(stage(fromHighland(s), ctx));
  return (s) => _(stage.consume(fromHighland(s), ctx));
}
