import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { EncodedLine } from '../../core/encoded-line.js';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink, SinkReport, StageContext } from '../../core/stage.js';
import type { FinishedSample, SampleSftLines } from '../../schemas/finished-sample.js';

export const RunSftOptions = z
  .strictObject({ path: z.string().min(1).describe("the run's sft.jsonl path") })
  .describe('run-level sft.jsonl (seeds/003 §4.4): the linear SFT records of ok and reused samples whose SFT is eligible, in the order of the sample stream');
export type RunSftOptions = z.input<typeof RunSftOptions>;

export const RunSftSegmentsOptions = z
  .strictObject({ path: z.string().min(1).describe("the run's sft_segments.jsonl path") })
  .describe('run-level sft_segments.jsonl (seeds/003 §4.4): compacted samples\' segments in request order; written only when there are any');
export type RunSftSegmentsOptions = z.input<typeof RunSftSegmentsOptions>;

/**
 * One of the run-level SFT files over the sample stream (in request order): each sample's lines of that kind, written
 * to a temporary file and renamed into place when the stream ends (never half a file). `written` counts the samples
 * that contributed.
 */
function runLinesSink(name: string, path: string, kind: keyof SampleSftLines, whenEmpty: 'empty-file' | 'no-file', open?: OpenOutput): Sink<FinishedSample> {
  const jsonl = createJsonlSink<EncodedLine>({ path, atomic: true, sha256: false, name, ...(open ? { open } : {}) });
  return {
    name,
    async consume(input: AsyncIterable<FinishedSample>, ctx: StageContext): Promise<SinkReport> {
      let received = 0;
      let contributed = 0;
      const lines = async function* () {
        for await (const sample of abortableInput(input, ctx.signal)) {
          received++;
          const bytes = (await sample.sftLines())?.[kind];
          if (!bytes) continue;
          contributed++;
          yield new EncodedLine([bytes]);
        }
      };
      const report = await jsonl.consume(lines(), ctx);
      if (contributed === 0 && whenEmpty === 'no-file') await rm(path, { force: true });
      return { ...report, name, received, written: contributed };
    },
  };
}

export const RunSftSubagentsOptions = z
  .strictObject({ path: z.string().min(1).describe("the run's sft_subagents.jsonl path") })
  .describe("run-level sft_subagents.jsonl: every completed sub-agent's linear record (its system prompt, tools, messages, and where it comes from), samples in request order, each one's sub-agents in tree order; written only when there are any");
export type RunSftSubagentsOptions = z.input<typeof RunSftSubagentsOptions>;

export function createRunSftSubagentsSink(options: RunSftSubagentsOptions, open?: OpenOutput): Sink<FinishedSample> {
  return runLinesSink('run-sft-subagents', RunSftSubagentsOptions.parse(options).path, 'subagents', 'no-file', open);
}

export function createRunSftSink(options: RunSftOptions, open?: OpenOutput): Sink<FinishedSample> {
  return runLinesSink('run-sft', RunSftOptions.parse(options).path, 'linear', 'empty-file', open);
}

export function createRunSftSegmentsSink(options: RunSftSegmentsOptions, open?: OpenOutput): Sink<FinishedSample> {
  return runLinesSink('run-sft-segments', RunSftSegmentsOptions.parse(options).path, 'segments', 'no-file', open);
}
