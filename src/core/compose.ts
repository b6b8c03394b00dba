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
  const fused = fuseAdjacentMaps(stages);
  return (input: AsyncIterable<unknown>, ctx: StageContext) => fused.reduce<AsyncIterable<unknown>>((acc, stage) => stage(acc, ctx), input);
}

/** What mapStage attaches to its transform so that compose can fuse runs of maps into one loop. */
const MAP_SPEC = Symbol('roller.mapStage');
interface MapSpec {
  name: string;
  fn: (item: unknown) => unknown;
}

function mapSpecOf(stage: Transform<unknown, unknown>): MapSpec | undefined {
  return (stage as unknown as { [MAP_SPEC]?: MapSpec })[MAP_SPEC];
}

/**
 * Adjacent map stages run as one generator: one async hop per item instead of one per map, with the
 * same per-stage counts. Other stages are left as they are.
 */
function fuseAdjacentMaps(stages: Transform<unknown, unknown>[]): Transform<unknown, unknown>[] {
  const out: Transform<unknown, unknown>[] = [];
  let run: MapSpec[] = [];
  const flush = () => {
    if (run.length === 1) out.push(mapStage(run[0]!.name, run[0]!.fn));
    else if (run.length > 1) out.push(fusedMaps(run));
    run = [];
  };
  for (const stage of stages) {
    const spec = mapSpecOf(stage);
    if (spec) run.push(spec);
    else {
      flush();
      out.push(stage);
    }
  }
  flush();
  return out;
}

function fusedMaps(specs: MapSpec[]): Transform<unknown, unknown> {
  return async function* fused(input, ctx) {
    const received = specs.map(() => 0);
    const emitted = specs.map(() => 0);
    try {
      next: for await (const item of input) {
        let x: unknown = item;
        for (let k = 0; k < specs.length; k++) {
          received[k]!++;
          x = specs[k]!.fn(x);
          if (x === undefined) continue next;
          emitted[k]!++;
        }
        yield x;
      }
    } finally {
      specs.forEach((spec, k) => {
        ctx.counters.add(spec.name, 'received', received[k]!);
        ctx.counters.add(spec.name, 'emitted', emitted[k]!);
        ctx.counters.add(spec.name, 'dropped', received[k]! - emitted[k]!);
      });
    }
  };
}

/**
 * The simplest transform (STYLE §1, rank 1): a map where `undefined` drops the item.
 * Counts received / emitted / dropped under `name`.
 */
export function mapStage<I, O>(name: string, fn: (item: I) => O | undefined): Transform<I, O> {
  const stage: Transform<I, O> = async function* map(input, ctx) {
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
  Object.defineProperty(stage, MAP_SPEC, { value: { name, fn: fn as (item: unknown) => unknown } satisfies MapSpec });
  return stage;
}
