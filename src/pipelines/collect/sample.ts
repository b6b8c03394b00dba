import { mkdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { CaptureFailure } from '../../harnesses/adapter.js';
import type { RecordedError } from '../../schemas/common.js';
import type { Grade, SampleCaptureRef, SampleInfo } from '../../schemas/run-info.js';
import type { Task } from '../../schemas/task.js';
import type { WireTraceMode } from '../../sinks/wire-trace/sink.js';
import type { DockerPlan } from './docker-plan.js';
import type { Isolation } from '../../sources/isolation.js';
import type { SegmentMeta } from '../../transforms/sft/segments.js';
import type { ModelUpstream, ResolvedModel } from './models.js';
import { PER_ATTEMPT_FILES } from '../sample-layout.js';
import type { AuxiliaryCallUsage, CompactionCallUsage } from './compaction-segments.js';
import type { CompletionAudit, ModelIdentityAudit, ThinkingAudit, WireEffortAudit } from './audits.js';
import { finishSample } from './sample-info.js';
import { runAttempt } from './attempt.js';
import type { SpawnWithoutParticipant } from '../../schemas/participant-usage.js';
import type { UserSimulatorInfo } from '../../schemas/dialogue.js';

export interface SampleRequest {
  index: number;
  task: Task;
  model: ResolvedModel;
}

export interface SampleSettings {
  /** A harness the registry can run (harnesses/index.ts). */
  harness: string;
  /** What a long sample is doing (a dialogue's turns), for the user watching. */
  onProgress?: (line: string) => void;
  harnessVersion: string;
  bin: string;
  runDir: string;
  taskDigest: string;
  timeoutS: number;
  retries: number;
  wireTrace: WireTraceMode;
  keepThinking: boolean;
  captureCalls: boolean;
  /** OpenClaw's cache trace: asked of the harness; kept in the sample (redacted) with --wire-trace full. */
  cacheTrace: boolean;
  captureDebug: 'on-error' | 'full' | 'off';
  /** model id -> the base URL its calls go to (the run's embedded scripted model, or the API base). */
  upstreams: ReadonlyMap<string, ModelUpstream>;
  /** The user simulators' models by id (tasks' user_simulator.model), their bases in upstreams. */
  simulators: ReadonlyMap<string, ResolvedModel>;
  /** A non-default harness profile (lock.json harness_profile): Pi's example sub-agent extension, OpenClaw's exec. */
  profile: string | null;
  /** --thinking: the reasoning level asked of the harness (null: its default). */
  thinking: string | null;
  /** --collect-path: extra work-dir paths copied to results/legacy/. */
  collectPaths: readonly string[];
  /** The Node binary the CLI runs on when it is not roller's own (OpenClaw's Node 24). */
  runtime?: string;
  /** Where the pinned CLI is installed (mounted read-only into a container). */
  installDir: string;
  /** The docker runner; absent: the local one. */
  docker?: DockerPlan;
  /** The local runner's process isolation (a PID namespace per harness and grader, where the machine allows). */
  isolation: Isolation;
  /** All of one sample's results/ together, in bytes. */
  maxResultsBytes: number;
}

/** samples/<model>/<index>_<task>, the model made one safe path segment. */
/**
 * samples/<model>/<index>_<task>, the index zero-padded to 4 digits so directories list in request order; a run an
 * older roller wrote keeps its unpadded names (a resume finds and reuses them there).
 */
export function sampleDirOf(runDir: string, r: { index: number; task: { id: string }; model: { id: string } }): string {
  const modelDir = join(runDir, 'samples', r.model.id.replace(/[^A-Za-z0-9._-]/g, '_'));
  const padded = join(modelDir, `${String(r.index).padStart(4, '0')}_${r.task.id}`);
  const legacy = join(modelDir, `${r.index}_${r.task.id}`);
  return legacy !== padded && !existsSync(padded) && existsSync(legacy) ? legacy : padded;
}

export interface AttemptResult {
  harnessReported: Record<string, unknown> | null;
  audits: { completion: CompletionAudit; modelIdentity: ModelIdentityAudit; wireEffort: WireEffortAudit | null; thinking: ThinkingAudit | null } | null;
  status: SampleInfo['status'];
  error: RecordedError | null;
  elapsedMs: number;
  participants: ParticipantUsage[];
  requests: number;
  conversion: Record<string, unknown> | null;
  results: SampleInfo['results'];
  capture: SampleCaptureRef | null;
  /** Process logs by name: stdout, stderr, and stdout.2, stderr.2, … for follow-up prompts. */
  logs: Record<string, string>;
  /** Compaction segments written (a compacted main context), else undefined. */
  segments?: SegmentMeta[];
  /** Compaction summary calls, whose tokens no native message holds. */
  compactionCalls?: CompactionCallUsage[];
  /** Calls of a participant that no native message holds (title requests). */
  auxiliaryCalls?: AuxiliaryCallUsage[];
  spawnsWithoutParticipant?: SpawnWithoutParticipant[];
  /** What the sample's user should know that is not an error (runtime.warnings). */
  warnings: string[];
  /** Capture errors that leave the harness's turn standing (runtime.capture_errors). */
  captureFailures: CaptureFailure[];
  /** The harness process's wall time (every prompt's process). */
  harnessMs: number;
  /** A user-simulator task: the simulator participant (user_simulator/info.json). */
  userSimulator?: UserSimulatorInfo;
  /** The task grader's verdict (tasks' grader). */
  grade?: Grade;
}


/**
 * One sample: up to 1 + retries complete attempts, each in a fresh HOME and work directory, the harness
 * talking to the model through its own recording proxy; then the native session converted (trace.jsonl,
 * trace_ACTF.json, trace_SFT.json), the capture published, results/ copied, info.json written. A sample
 * that fails keeps its evidence (raw, ACTF) and each attempt's process logs under rollout/, but no SFT.
 */
export async function runSample(r: SampleRequest, s: SampleSettings): Promise<SampleInfo> {
  const dir = sampleDirOf(s.runDir, r);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const attempts: SampleInfo['attempts'] = [];
  const started = Date.now();
  let last: AttemptResult | undefined;
  for (let attempt = 1; attempt <= 1 + s.retries; attempt++) {
    // Nothing of an earlier attempt may mix into this one (seeds/003 §7.3).
    for (const f of PER_ATTEMPT_FILES) await rm(join(dir, f), { recursive: true, force: true });
    last = await runAttempt(r, s, dir, attempt);
    attempts.push({ attempt, status: last.status, elapsed_ms: last.elapsedMs, harness_ms: last.harnessMs, error: last.error });
    if (last.status === 'ok') break;
  }
  return finishSample(dir, {
    task_id: r.task.id,
    index: r.index,
    model: r.model.id,
    harness: { name: s.harness, version: s.harnessVersion },
    attempts,
    elapsed_ms: Date.now() - started,
    provenance: { task_bundle_digest: s.taskDigest, task_id: r.task.id, metadata: r.task.metadata ?? null },
  }, { ...last!, keepThinking: s.keepThinking });
}


