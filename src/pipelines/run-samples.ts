import { join } from 'node:path';
import { runPipeline } from '../core/run-pipeline.js';
import type { RunReport } from '../core/stage.js';
import type { FinishedSample } from '../schemas/finished-sample.js';
import { createRunSftSegmentsSink, createRunSftSink, createRunSftSubagentsSink } from '../sinks/run-sft/sink.js';
import type { SinkFailure } from '../sinks/user-sink.js';
import type { UserSinkSet } from './user-sinks.js';

export interface RunSamplesOutcome {
  /** Samples whose linear SFT is in sft.jsonl, compacted ones whose segments are in sft_segments.jsonl, and ones with sub-agent records in sft_subagents.jsonl. */
  included: number;
  segmented: number;
  withSubagents: number;
  /** User sinks that failed (the run's own files are complete regardless). */
  sinkFailures: SinkFailure[];
}

/**
 * The run's sample stream (finished samples in request order) into its sinks: run-level sft.jsonl and
 * sft_segments.jsonl (written as the samples come, renamed into place at the end; an abort leaves the run's files as
 * they were), and the user's sinks, each fed through its own guarded feed — a user sink that fails is reported and
 * never stops the run's own files.
 */
export async function runSampleSinks(runDir: string, samples: AsyncIterable<FinishedSample>, user: UserSinkSet, signal?: AbortSignal): Promise<RunSamplesOutcome> {
  let report: RunReport;
  try {
    report = await runPipeline(
      {
        name: 'run-samples',
        source: () =>
          (async function* () {
            for await (const sample of samples) {
              await user.add(sample);
              yield sample;
            }
          })(),
        sinks: [createRunSftSink({ path: join(runDir, 'sft.jsonl') }), createRunSftSegmentsSink({ path: join(runDir, 'sft_segments.jsonl') }), createRunSftSubagentsSink({ path: join(runDir, 'sft_subagents.jsonl') })],
      },
      signal ? { signal } : {},
    );
  } catch (err) {
    await user.end(); // the user's sinks finish whatever happened to the run's own files
    throw err;
  }
  const sinkFailures = await user.end();
  return { included: report.sinks[0]!.written, segmented: report.sinks[1]!.written, withSubagents: report.sinks[2]!.written, sinkFailures };
}
