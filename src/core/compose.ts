import type { StageContext, Transform } from './stage.js';

/** compose(a, b, c) is one Transform that runs a, then b, then c. Typed for up to six stages. */
export function compose<A, B>(t1: Transform<A, B>): Transform<A, B>;
export function compose<A, B, C>(t1: Transform<A, B>, t2: Transform<B, C>): Transform<A, C>;
export function compose<A, B, C, D>(t1: Transform<A, B>, t2: Transform<B, C>, t3: Transform<C, D>): Transform<A, D>;
export function compose<A, B, C, D, E>(
  t1: Transform<A, B>,
  t2: Transform<B, C>,
  t3: Transform<C, D>,
  t4: Transform<D, E>,
): Transform<A, E>;
export function compose<A, B, C, D, E, F>(
  t1: Transform<A, B>,
  t2: Transform<B, C>,
  t3: Transform<C, D>,
  t4: Transform<D, E>,
  t5: Transform<E, F>,
): Transform<A, F>;
export function compose<A, B, C, D, E, F, G>(
  t1: Transform<A, B>,
  t2: Transform<B, C>,
  t3: Transform<C, D>,
  t4: Transform<D, E>,
  t5: Transform<E, F>,
  t6: Transform<F, G>,
): Transform<A, G>;
export function compose(...stages: Transform<unknown, unknown>[]): Transform<unknown, unknown>;
export function compose(...stages: Transform<unknown, unknown>[]): Transform<unknown, unknown> {
  return (input: AsyncIterable<unknown>, ctx: StageContext) =>
    stages.reduce<AsyncIterable<unknown>>((acc, stage) => stage(acc, ctx), input);
}

/**
 * The simplest transform (STYLE §1, rank 1): a map where `undefined` drops the item.
 * Counts received / emitted / dropped under `name`.
 */
export function mapStage<I, O>(name: string, fn: (item: I) => O | undefined): Transform<I, O> {
  return async function* map(input, ctx) {
    let received = 0;
    let emitted = 0;
    try {
      for await (const item of input) {
        received++;
        const out = fn(item);
        if (out !== undefined) {
          emitted++;
          yield out;
        }
      }
    } finally {
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', emitted);
      ctx.counters.add(name, 'dropped', received - emitted);
    }
  };
}
