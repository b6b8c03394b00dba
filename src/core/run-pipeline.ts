import { abortable, abortPromise } from './abort.js';
import { compose } from './compose.js';
import { createStageContext, type StageContextOptions } from './context.js';
import { abortReason } from './errors.js';
import { fanOut, settleWithin, type FanOutBranch, type FanOutOptions } from './fan-out.js';
import type { RunReport, Sink, SinkReport, Source, Transform } from './stage.js';

export interface PipelineSpec<I, O> {
  name?: string;
  source: Source<I>;
  transforms?: readonly Transform<any, any>[];
  /** One sink, or several fed through fanOut (the slowest blocking sink sets the pace). */
  sinks: Sink<O> | readonly (Sink<O> | FanOutBranch<O>)[];
  fanOut?: FanOutOptions<O>;
}

export interface RunOptions extends StageContextOptions {
  /**
   * After the first fatal error, how long to give stages to close their files before the run
   * rejects anyway (so nothing hangs on a stuck stage). Default 2000 ms.
   */
  teardownGraceMs?: number;
}

/**
 * Wires source → transforms → sink(s) and runs them to the end. The first fatal error (from any stage,
 * or the caller's signal) aborts the shared signal, every wait gives way, and the run rejects with that
 * first cause. Rejected records are counted, not fatal.
 */
export async function runPipeline<I, O>(spec: PipelineSpec<I, O>, options: RunOptions = {}): Promise<RunReport> {
  const started = performance.now();
  const controller = new AbortController();
  const external = options.signal;
  const forward = () => controller.abort(abortReason(external!));
  if (external?.aborted) forward();
  else external?.addEventListener('abort', forward, { once: true });

  const ctx = createStageContext({ ...options, signal: controller.signal });
  const list = Array.isArray(spec.sinks) ? (spec.sinks as readonly (Sink<O> | FanOutBranch<O>)[]) : [spec.sinks as Sink<O>];
  const only = list.length === 1 && 'consume' in list[0]! ? (list[0] as Sink<O>) : undefined;
  const sink: Sink<O> = only ?? fanOut(list, spec.fanOut);
  const transform = compose(...((spec.transforms ?? []) as Transform<unknown, unknown>[]));
  const abort = abortPromise(controller.signal);
  let consuming: Promise<SinkReport> | undefined;
  try {
    const stream = transform(abortable(spec.source(ctx), controller.signal), ctx) as AsyncIterable<O>;
    consuming = sink.consume(stream, ctx);
    const report = await Promise.race([consuming, abort.promise]);
    const counters = ctx.counters.snapshot();
    const rejected = Object.values(counters).reduce((n, row) => n + row.rejected, 0);
    return {
      name: spec.name ?? 'pipeline',
      sinks: only ? [report] : (report.branches ?? []),
      counters,
      rejected,
      elapsedMs: performance.now() - started,
    };
  } catch (err) {
    if (!controller.signal.aborted) controller.abort(err instanceof Error ? err : new Error(String(err)));
    const cause = abortReason(controller.signal);
    if (consuming) await settleWithin([consuming], options.teardownGraceMs ?? 2000);
    throw cause;
  } finally {
    abort.dispose();
    external?.removeEventListener('abort', forward);
  }
}
