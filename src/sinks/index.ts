/**
 * The sink registry (STYLE.md §3): a name, what it consumes, its options schema and its factory. Every file roller
 * writes is written by one of these; adding a sink touches its own folder and one line here. A user's sink needs no
 * registration: `--sink ./my-sink.js` (or a Sink object passed to collect/reprocess/convert) — see user-sinks.
 */
import type { z } from 'zod';
import type { OpenOutput } from '../core/output.js';
import type { Sink } from '../core/stage.js';
import { ActfOptions, createActfSink } from './actf/sink.js';
import { AtifOptions, createAtifSink } from './atif/sink.js';
import { CallsJsonlOptions, createCallsJsonlSink } from './calls-jsonl/sink.js';
import { CaptureManifestOptions, createCaptureManifestSink } from './capture-manifest/sink.js';
import { ConversionJsonOptions, createConversionJsonSink } from './conversion/sink.js';
import { createHfDatasetSink, HfDatasetOptions } from './hf-dataset/sink.js';
import { createOtlpSink, OtlpOptions } from './otlp/sink.js';
import { createParquetTablesSink, ParquetTablesOptions } from './parquet-tables/sink.js';
import { createRlRolloutsSink, RlRolloutsOptions } from './rl-rollouts/sink.js';
import { createRelationsSink, RelationsJsonlOptions } from './relations/sink.js';
import { createRunInfoSink, RunInfoOptions } from './run-info/sink.js';
import { createRunLockSink, RunLockOptions } from './run-lock/sink.js';
import { createRunSftSegmentsSink, createRunSftSink, createRunSftSubagentsSink, RunSftOptions, RunSftSegmentsOptions, RunSftSubagentsOptions } from './run-sft/sink.js';
import { createSampleInfoSink, SampleInfoOptions } from './sample-info/sink.js';
import { createSftSink, SftOptions } from './sft/sink.js';
import { createSftSegmentsSink, SftSegmentsOptions } from './sft-segments/sink.js';
import { createToolsCaptureSink, ToolsCaptureOptions } from './tools-capture/sink.js';
import { createTraceSink, TraceOptions } from './trace/sink.js';
import { createUsageJsonSink, UsageJsonOptions } from './usage/sink.js';
import { createWireTraceSink, WireTraceOptions } from './wire-trace/sink.js';

/**
 * What a sink consumes: `calls` (attributed calls: roller.call/v1) and `samples` (FinishedSample, in request order)
 * are the two streams a user's sink can join; the others are the documents and records of one file family.
 */
export type SinkInput = 'calls' | 'samples' | 'document' | 'records';

export interface SinkDefinition {
  input: SinkInput;
  options: z.ZodType;
  create(options: never, open?: OpenOutput): Sink<never>;
}

export const sinks = {
  'calls-jsonl': { input: 'calls', options: CallsJsonlOptions, create: createCallsJsonlSink },
  relations: { input: 'records', options: RelationsJsonlOptions, create: createRelationsSink },
  'capture-manifest': { input: 'document', options: CaptureManifestOptions, create: createCaptureManifestSink },
  trace: { input: 'records', options: TraceOptions, create: createTraceSink },
  actf: { input: 'document', options: ActfOptions, create: createActfSink },
  sft: { input: 'document', options: SftOptions, create: createSftSink },
  'sft-segments': { input: 'document', options: SftSegmentsOptions, create: createSftSegmentsSink },
  'sample-info': { input: 'document', options: SampleInfoOptions, create: createSampleInfoSink },
  'run-sft': { input: 'samples', options: RunSftOptions, create: createRunSftSink },
  'run-sft-segments': { input: 'samples', options: RunSftSegmentsOptions, create: createRunSftSegmentsSink },
  'run-sft-subagents': { input: 'samples', options: RunSftSubagentsOptions, create: createRunSftSubagentsSink },
  'run-info': { input: 'document', options: RunInfoOptions, create: createRunInfoSink },
  'run-lock': { input: 'document', options: RunLockOptions, create: createRunLockSink },
  'wire-trace': { input: 'calls', options: WireTraceOptions, create: createWireTraceSink },
  'tools-capture': { input: 'calls', options: ToolsCaptureOptions, create: createToolsCaptureSink },
  usage: { input: 'document', options: UsageJsonOptions, create: createUsageJsonSink },
  conversion: { input: 'document', options: ConversionJsonOptions, create: createConversionJsonSink },
  atif: { input: 'records', options: AtifOptions, create: createAtifSink },
  'hf-dataset': { input: 'samples', options: HfDatasetOptions, create: createHfDatasetSink },
  'parquet-tables': { input: 'samples', options: ParquetTablesOptions, create: createParquetTablesSink },
  'rl-rollouts': { input: 'samples', options: RlRolloutsOptions, create: createRlRolloutsSink },
  otlp: { input: 'samples', options: OtlpOptions, create: createOtlpSink },
} as const satisfies Record<string, SinkDefinition>;

export type SinkName = keyof typeof sinks;

export * from './actf/sink.js';
export * from './atif/sink.js';
export * from './calls-jsonl/sink.js';
export * from './capture-manifest/sink.js';
export * from './conversion/sink.js';
export * from './hf-dataset/sink.js';
export * from './parquet-tables/sink.js';
export * from './rl-rollouts/sink.js';
export * from './otlp/sink.js';
export { sftRecordOfRow } from './hf-dataset/rows.js';
export * from './user-sink.js';
export * from './relations/sink.js';
export * from './run-info/sink.js';
export * from './run-lock/sink.js';
export * from './run-sft/sink.js';
export * from './sample-info/sink.js';
export * from './sft/sink.js';
export * from './sft-segments/sink.js';
export * from './tools-capture/sink.js';
export * from './trace/sink.js';
export * from './usage/sink.js';
export * from './wire-trace/sink.js';
