/**
 * roller's public API, an explicit list (no `export *`): what a user's script needs — the stage contract and engine,
 * the record schemas it validates with, the sources (the recording proxy, the archive calls reader), the correlators,
 * the sink helpers, the harness registry and the pipelines (collect, reprocess, convert, export, the run reader). The
 * rest is under subpaths: `agent-roller/schemas` (every record type), `agent-roller/capture` (every correlator and check),
 * `agent-roller/protocols` (the decoders), `agent-roller/sinks` (every output family's sink), `agent-roller/testing` (the sink
 * conformance suite). Internals (queue plumbing, abort helpers, the wire log's writer) are not exported.
 */

// The stage contract and the engine.
export type { Envelope, Pipeline, RunReport, Sink, SinkReport, Source, StageContext, Transform } from './core/stage.js';
export { createStageContext, type StageContextOptions } from './core/context.js';
export { compose, mapStage } from './core/compose.js';
export { fanOut, type FanOutBranch, type FanOutOptions } from './core/fan-out.js';
export { runPipeline, type PipelineSpec, type RunOptions } from './core/run-pipeline.js';
export { fromSource, through, toHighland } from './core/highland.js';
export { createJsonlSink, type JsonlSinkOptions } from './core/jsonl-sink.js';
export { jsonlFileSource, jsonlValueSource, type JsonlSourceOptions } from './core/jsonl-source.js';
export { createDocumentSink, itemsOf, type DocumentSinkOptions } from './core/document-sink.js';
export { EncodedLine, encodeJsonlLines } from './core/encoded-line.js';
export { writeFileAtomic, writeJsonAtomic, type WrittenFile } from './core/atomic-write.js';
export { openFileOutput, type OpenOutput } from './core/output.js';
export { ErrorCode, isRollerError, RollerError, type Origin } from './core/errors.js';
export type { Rejected } from './core/rejected.js';

// Records: the schemas scripts validate against, with their types (every record type: `agent-roller/schemas`).
export {
  Actf, AtifTrajectory, Call, Conversation, Lock, Manifest, Relation, RunInfo, SampleInfo, SftRecord, SftSegment, Task,
  type RuntimeParticipant, type SampleCaptureRef,
} from './schemas/index.js';
export { checkValue, type SchemaIssue } from './schemas/validate.js';
export { recordTypes } from './schemas/registry.js';
export { isRecordTypeName, RECORD_TYPE_NAMES, type RecordTypeName } from './schemas/record-type-names.js';
export type { FinishedSample, SampleSftLines } from './schemas/finished-sample.js';
export type { HeaderJoin, NativeCapture, NativeCompactions, NativeOutputs } from './schemas/native-capture.js';
export { addTokens, ParticipantUsage, TokensByKind, zeroTokens } from './schemas/participant-usage.js';

// Sources.
export type { RecordingProxy, RecordingProxyOptions } from './sources/proxy/recording-proxy.js';
export { readWireFrames, type WireFrame } from './sources/proxy/wire-frames.js';
export { projectCalls } from './sources/proxy/project-calls.js';
export { startScriptedModel, type ScriptedModelServer } from './sources/scripted-model/index.js';
export { readCallsLazily } from './sources/archive/calls-reader.js';
export { callsJsonlBodies } from './sources/archive/calls-bodies.js';

// Transforms: the capture correlators a script re-derives with (all of them: `agent-roller/capture`; the protocol decoders:
// `agent-roller/protocols`).
export { attributeCalls, callCorrelator, type CorrelationEvidence } from './transforms/capture/correlate.js';
export { deriveRelations } from './transforms/capture/relations.js';
export { validateCapture } from './pipelines/capture/validate.js';
export { viewCapture } from './transforms/capture/view.js';
export { createDecoder, protocolOfPath } from './transforms/protocols/index.js';

// Sinks: the registry, what a user's sink module exports, and the sinks a run takes (every sink: `agent-roller/sinks`).
export { sinks, type SinkDefinition, type SinkInput, type SinkName } from './sinks/index.js';
export { defineSink, sinkFrom, SinkFeed, type SinkFailure, type SinkLoopContext, type SinkModule, type UserSinks } from './sinks/user-sink.js';
export { createCallsJsonlSink, CallsJsonlOptions } from './sinks/calls-jsonl/sink.js';
export { createRunSftSink, createRunSftSegmentsSink } from './sinks/run-sft/sink.js';
export { createWireTraceSink, type WireTraceMode } from './sinks/wire-trace/sink.js';
// The zod a sink module's options schema should be made with (the same instance roller checks them with).
export { z } from 'zod';

// Harnesses: the adapter contract and the registry.
export type { AtifSubagent, CaptureInput, ConvertInput, HarnessAdapter, HarnessRunner, RunLaunch, SessionConversion } from './harnesses/adapter.js';
export { harnessAdapter, harnessNames, registerHarness, runnableHarnesses } from './harnesses/index.js';
export { perIdNativeCapture } from './harnesses/native-capture.js';

// Pipelines.
export { collect, type CollectOptions, type CollectResult } from './pipelines/collect/run.js';
export type { DockerRequest } from './pipelines/collect/docker-plan.js';
export { checkHarborSolutions, type OracleResult } from './pipelines/harbor-oracle.js';
export { loadHarborTasks } from './pipelines/collect/harbor-tasks.js';
export { reprocess, type ReprocessOptions, type ReprocessReport } from './pipelines/reprocess/run.js';
// Past one machine: shards of a run and their merge, queue workers, the launch files of Slurm and Kubernetes.
export { inShard, parseShard, shardFromEnv, shardRunName, runLockDigest, type Shard } from './pipelines/scale/shard.js';
export { merge, MERGE_VOLATILE, type MergeOptions, type MergeResult } from './pipelines/scale/merge.js';
export { runWorker, type WorkerOptions } from './pipelines/scale/queue-worker.js';
export type { QueueTarget } from './pipelines/scale/queue-jobs.js';
export { launchPlan, type LaunchPlan } from './pipelines/scale/launch-plan.js';
export { writeSlurmScripts, submitSlurm, type SlurmOptions } from './pipelines/scale/slurm.js';
export { convertNative as convert, type ConvertOptions, type ConvertedSession } from './pipelines/convert.js';
export { exportAtif, type ExportResult } from './pipelines/export-atif.js';
export { exportRunData, type DataExportFormat, type DataExportOptions } from './pipelines/export-data.js';
export { finalizeCapture, finalizeNativeCapture, type CallSource, type FinalizeCaptureOptions } from './pipelines/capture/finalize.js';
export { startProxyPipeline, startRecordingProxy, projectWireLog } from './pipelines/proxy.js';
export { openUserSinks, sinkSpecs, type SinkSpec, type UserSinkSet } from './pipelines/user-sinks.js';
export { finishedSample } from './pipelines/finished-sample.js';
export { openRun, type OpenedRun, type RunHead, type RunSample, type SampleRow } from './pipelines/run-reader.js';
// roller view: a run's answers for a page, served (loopback, read-only) or written as a static site.
export { ViewData } from './pipelines/view/view-data.js';
export { startViewServer, type ViewServer } from './pipelines/view/server.js';
export { exportStatic, type StaticExportReport } from './pipelines/view/static-export.js';
// SQL over runs (DuckDB views on their files).
export { openRunQuery, queryRuns, type QueryFormat, type RunQuery } from './pipelines/query/query.js';
export { nativeUsage, formatNativeUsage, type NativeUsageReport } from './pipelines/native-usage.js';
export { scanUsage, type ScannedParticipant, type UsageScan } from './harnesses/claude-code/usage-scan.js';
