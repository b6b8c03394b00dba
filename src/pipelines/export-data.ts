import { createStageContext } from '../core/context.js';
import { collectGarbage } from '../core/heap.js';
import type { SinkReport } from '../core/stage.js';
import { createHfDatasetSink } from '../sinks/hf-dataset/sink.js';
import { createOtlpSink, type OtlpOptions } from '../sinks/otlp/sink.js';
import { createParquetTablesSink } from '../sinks/parquet-tables/sink.js';
import { createRlRolloutsSink } from '../sinks/rl-rollouts/sink.js';
import { rm } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../core/errors.js';
import { openRun, type RunSample } from './run-reader.js';

export type DataExportFormat = 'hf' | 'parquet' | 'otlp' | 'rl';

export interface DataExportOptions {
  /** A shard (or table file) is closed before its rows' JSON passes this many bytes. */
  maxShardBytes?: number;
  /** otlp: where and how (the OTEL_EXPORTER_OTLP_* variables otherwise), and whether messages go too. */
  otlp?: Pick<OtlpOptions, 'endpoint' | 'protocol' | 'content'>;
  signal?: AbortSignal;
}

/**
 * `roller export RUN --format hf|parquet|otlp`: the run's samples in request order (each sample's info.json checked as it
 * is reached) into the registered sink of that format — the same sink `--sink hf-dataset` / `--sink parquet-tables`
 * gives collect, reprocess and merge. A damaged or missing sample stops the export with its path; nothing partial is
 * left (the output is built beside its place).
 */
export async function exportRunData(runDir: string, format: DataExportFormat, output: string, options: DataExportOptions = {}): Promise<SinkReport & { skipped?: number }> {
  const run = await openRun(runDir);
  const samples = collectingGarbage(run.samples());
  const ctx = createStageContext(options.signal ? { signal: options.signal } : {});
  if (format === 'otlp') {
    const sink = createOtlpSink(options.otlp ?? {});
    const report = await sink.consume(samples, ctx);
    return { ...report, skipped: sink.skipped() };
  }
  const shard = options.maxShardBytes === undefined ? {} : { max_shard_bytes: options.maxShardBytes };
  if (format === 'rl') {
    const report = await createRlRolloutsSink({ output, ...shard }).consume(samples, ctx);
    if (report.written === 0) {
      await rm(output, { recursive: true, force: true });
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `${runDir}: no model call of this run carries token ids, so there are no RL rollouts to export (nothing was written). Collect from an open-model server (vLLM, SGLang) with "token_ids": true in its --model-config entry and --capture-calls`);
    }
    return report;
  }
  const sink = format === 'hf' ? createHfDatasetSink({ output, ...shard }) : createParquetTablesSink({ output, ...shard });
  return sink.consume(samples, ctx);
}

/** How far RSS may grow past its low point since the last full collection (bench/export). */
const GC_GROWTH = 128 << 20;

/**
 * The samples, with a full collection whenever RSS has grown GC_GROWTH past where the last one left it: V8 collects the
 * garbage of large records lazily. What a collection cannot free raises the mark, so a run that truly needs more
 * memory is never collected sample after sample.
 */
async function* collectingGarbage(samples: AsyncIterable<RunSample>): AsyncGenerator<RunSample> {
  let mark = process.memoryUsage.rss();
  for await (const sample of samples) {
    yield sample;
    const rss = process.memoryUsage.rss();
    // Memory returned meanwhile (a Parquet shard's conversion done) lowers the mark: growth counts from the low point.
    if (rss < mark) mark = rss;
    else if (rss - mark > GC_GROWTH) {
      collectGarbage();
      mark = process.memoryUsage.rss();
    }
  }
}
