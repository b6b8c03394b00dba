import { z } from 'zod';
import { HarnessName, IsoTimestamp, NonNegativeInt, PricedCost, RecordedError, SampleStatus, UsageTotals } from './common.js';

export const RUN_INFO_SCHEMA = 'roller.run-info/v1';

export const RunState = z.enum(['initializing', 'running', 'finalizing', 'finished', 'interrupted', 'finalization_error']);

/** What the task's grader said of the agent's work (bench scores): never a sample status. */
export const Grade = z
  .strictObject({
    status: z.enum(['passed', 'failed', 'timeout', 'error']).describe('passed: exit 0; failed: another exit code; error: it could not run or its reward file is unreadable'),
    exit_code: z.number().int().nullable(),
    scores: z.record(z.string(), z.number()).describe('reward.json as written, or {reward} from reward.txt; {} when it wrote neither'),
    elapsed_ms: NonNegativeInt,
    reason: z.string().nullable(),
  })
  .describe("the task grader's verdict (tasks' grader.command, run in the work directory after the harness)");
export type Grade = z.infer<typeof Grade>;

export const RunSampleRow = z.strictObject({
  index: NonNegativeInt,
  task_id: z.string().min(1),
  model: z.string().min(1),
  status: SampleStatus,
  error: RecordedError.nullable(),
  path: z.string().describe('sample directory, relative to the run directory'),
  usage: UsageTotals.nullable(),
  grade: Grade.shape.status.optional().describe("the task grader's verdict (sample info.json grade)"),
});

export const ResumeEntry = z.strictObject({
  at: IsoTimestamp,
  took_over: z.string().nullable().describe('the killed collect whose stale lock this resume took over, or null'),
  cleaned: z.array(z.string()).describe("temporary directories of samples the killed run left, removed"),
  changes: z
    .record(z.string(), z.strictObject({ from: z.unknown(), to: z.unknown() }))
    .describe('options that do not change the data (concurrency, retries) and were changed by this resume'),
});
export type ResumeEntry = z.infer<typeof ResumeEntry>;

export const RunInfo = z
  .strictObject({
    schema: z.literal(RUN_INFO_SCHEMA),
    roller_version: z.string(),
    run_name: z.string().min(1),
    state: RunState,
    created_at: IsoTimestamp,
    updated_at: IsoTimestamp,
    config: z.record(z.string(), z.unknown()).describe('collection configuration (credentials never appear)'),
    delegation: z
      .strictObject({ available: z.literal(false), reason: z.string().min(1) })
      .optional()
      .describe("the harness ran without its delegation tool in this run, and why (absent: it had one, or has none to offer)"),
    progress: z.strictObject({ total: NonNegativeInt, processed: NonNegativeInt, pending: NonNegativeInt }),
    requests: z.strictObject({ tasks: NonNegativeInt, models: NonNegativeInt }),
    summary: z.strictObject({
      ok: NonNegativeInt,
      error: NonNegativeInt,
      timeout: NonNegativeInt,
      skipped: NonNegativeInt,
      failed: NonNegativeInt.describe('error + timeout'),
      sft_included: NonNegativeInt.optional().describe('samples whose linear SFT is in sft.jsonl (set when the run is finalized)'),
      sft_segmented: NonNegativeInt.optional().describe('compacted samples whose segments are in sft_segments.jsonl instead'),
      sft_excluded: NonNegativeInt.optional().describe('the other samples: failed, not run, or no eligible SFT'),
      training: z
        .strictObject({
          processed: NonNegativeInt,
          sft_eligible: NonNegativeInt,
          excluded: z.record(z.string(), NonNegativeInt),
          thinking_mismatch: NonNegativeInt,
          wire_effort_mismatch: NonNegativeInt,
          wire_effort_unverified: NonNegativeInt,
          incomplete: NonNegativeInt,
          model_name_mismatch: NonNegativeInt,
          subagents_not_completed: NonNegativeInt.optional().describe('samples with a sub-agent that did not complete (failed, running, unknown, missing), whatever their own status'),
          token_continuity: z
            .strictObject({ samples: NonNegativeInt, checked: NonNegativeInt, continuous: NonNegativeInt, breaks: NonNegativeInt })
            .optional()
            .describe("samples with the server's token ids, and over them the prompts checked against their agent's previous call, continued, broken; absent without token ids"),
        })
        .optional()
        .describe('seeds/003 summary.training: processed samples (reused included) by SFT eligibility and audit finding'),
      grades: z
        .strictObject({ graded: NonNegativeInt, passed: NonNegativeInt, failed: NonNegativeInt, timeout: NonNegativeInt, error: NonNegativeInt })
        .optional()
        .describe("the task graders' verdicts over processed samples (reused included); absent when no task has a grader. Independent of sample status and SFT inclusion"),
    }),
    usage: UsageTotals,
    samples: z.array(RunSampleRow),
    errors: z.array(RecordedError),
    resume_history: z.array(ResumeEntry).optional().describe('each --resume of the run, in order'),
    merged_from: z
      .array(z.strictObject({ part: z.string().min(1), dir: z.string().min(1), state: RunState, created_at: IsoTimestamp, updated_at: IsoTimestamp, resumes: NonNegativeInt }))
      .optional()
      .describe('roller merge: the parts (shards, queue workers\' outputs) this run was joined from, in the order given'),
  })
  .superRefine((info, ctx) => {
    if (info.progress.processed + info.progress.pending !== info.progress.total) {
      ctx.addIssue({ code: 'custom', path: ['progress'], message: 'processed + pending must equal total' });
    }
  })
  .describe('run info.json: progress, totals and per-sample status of a collect run');
export type RunInfo = z.infer<typeof RunInfo>;

export const SAMPLE_INFO_SCHEMA = 'roller.sample-info/v1';

export const TrajectoryConversion = z.strictObject({
  target: z.enum(['actf', 'sft', 'sft_segments']),
  status: z.enum(['ok', 'unavailable']),
  reason: z.string().nullable(),
});


/** Where a sample's published capture is, and how it ended (manifest.json says the rest). */
export const SampleCaptureRef = z.strictObject({
  status: z.enum(['complete', 'partial', 'error']),
  path: z.string().min(1).describe('capture/attempt-NNNN, relative to the sample'),
  coverage: z.string().nullable().describe("manifest coverage.status (null: the manifest has none)"),
  token_continuity: z
    .strictObject({ checked: NonNegativeInt, continuous: NonNegativeInt, breaks: NonNegativeInt })
    .optional()
    .describe("with the server's token ids: calls whose prompt was checked against their agent's previous call, how many continued it, how many broke (manifest token_continuity says where)"),
});
export type SampleCaptureRef = z.infer<typeof SampleCaptureRef>;

/** A participant as info.json's runtime lists it (usage.json's record, less what the capture holds). */
export const RuntimeParticipant = z
  .object({
    participant: z.string(),
    role: z.enum(['root', 'child']),
    native_id: z.string(),
    parent: z.string().nullable(),
    depth: z.number().int(),
    spawn_tool_call_id: z.string().nullable(),
    messages: NonNegativeInt,
    tokens: z.record(z.string(), z.number()),
    status: z.string(),
    status_source: z.string().nullable(),
    reason: z.string().nullable().optional(),
    cost_usd: z.number().nullable().optional().describe('the cost the harness reported for it'),
    ...PricedCost.shape,
  })
  .catchall(z.unknown());
export type RuntimeParticipant = z.infer<typeof RuntimeParticipant>;

export const SampleInfo = z
  .strictObject({
    schema: z.literal(SAMPLE_INFO_SCHEMA),
    task_id: z.string().min(1),
    index: NonNegativeInt,
    model: z.string().min(1),
    harness: z.strictObject({ name: HarnessName, version: z.string() }),
    status: SampleStatus,
    error: RecordedError.nullable(),
    attempts: z.array(
      z.strictObject({
        attempt: z.number().int().positive(),
        status: SampleStatus,
        elapsed_ms: NonNegativeInt,
        harness_ms: NonNegativeInt.optional().describe("the harness process's own wall time in this attempt (every prompt); the rest of elapsed_ms is roller's"),
        error: RecordedError.nullable(),
      }),
    ),
    elapsed_ms: NonNegativeInt,
    usage: UsageTotals.nullable(),
    trajectory: z.strictObject({
      raw_schema: z.string().nullable().describe('e.g. claude-code-session-jsonl, codex-session-jsonl'),
      raw: z.string().nullable(),
      actf: z.string().nullable(),
      sft: z.string().nullable(),
      sft_subagents: z.string().optional().describe("trace_SFT_subagents.jsonl: the sample's completed sub-agents as linear records (runtime.subagent_sft says why each is or is not)"),
      sft_segments: z
        .array(z.strictObject({ path: z.string(), order: NonNegativeInt, boundary_source: z.string(), call_ids: z.array(z.string()) }))
        .optional(),
    }),
    results: z.array(
      z.strictObject({ path: z.string(), size: NonNegativeInt, mime: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
    ),
    grade: Grade.optional().describe('present when the task has a grader'),
    runtime: z
      .strictObject({
        trajectory_conversion: z.array(TrajectoryConversion),
        sft_eligibility: z.strictObject({ eligible: z.boolean(), reason: z.string().nullable() }).optional(),
        capture: SampleCaptureRef.nullable().optional().describe('the published capture (with --capture-calls), null without one'),
        participants: z.array(RuntimeParticipant).optional().describe("the agent tree: each participant's own tokens, status and where it was read"),
        warnings: z.array(z.string()).optional().describe('what the sample\'s user should know that is not an error'),
        read_notes: z.array(z.string()).optional().describe('known native records read with a redundant field missing: what was read in its place'),
      })
      .catchall(z.unknown())
      .describe('audits (thinking, wire effort, completion, model identity) are added by later stages'),
    provenance: z.record(z.string(), z.unknown()),
  })
  .describe('sample info.json: status, attempts, usage, paths and runtime audits of one sample');
export type SampleInfo = z.infer<typeof SampleInfo>;
