import { z } from 'zod';

/**
 * ATIF v1.7 (Harbor RFC 0001) with the validator rules of harbor.utils.trajectory_validator
 * (reference/ATIF.md). Every object forbids unknown keys, as Harbor's models do; custom data goes
 * in the `extra` objects.
 */
export const ATIF_VERSIONS = ['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6', 'ATIF-v1.7'] as const;
export const ATIF_VERSION = 'ATIF-v1.7';

const Extra = z.record(z.string(), z.unknown()).nullable().optional();

/** Python's datetime.fromisoformat after replacing a trailing Z (what the validator accepts). */
const PY_ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d{1,6})?)?)?([+-]\d{2}:?\d{2}(:\d{2}(\.\d{1,6})?)?|Z)?)?$/;
export const AtifTimestamp = z.string().refine((v) => PY_ISO.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))), {
  message: 'not an ISO-8601 timestamp (datetime.fromisoformat)',
});

export const ImageSource = z.strictObject({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: z.string(),
});

export const ContentPart = z
  .strictObject({
    type: z.enum(['text', 'image']),
    text: z.string().nullable().optional(),
    source: ImageSource.nullable().optional(),
  })
  .superRefine((part, ctx) => {
    if (part.type === 'text') {
      if (part.text == null) ctx.addIssue({ code: 'custom', path: ['text'], message: "'text' is required when type is 'text'" });
      if (part.source != null) ctx.addIssue({ code: 'custom', path: ['source'], message: "'source' is not allowed when type is 'text'" });
    } else {
      if (part.source == null) ctx.addIssue({ code: 'custom', path: ['source'], message: "'source' is required when type is 'image'" });
      if (part.text != null) ctx.addIssue({ code: 'custom', path: ['text'], message: "'text' is not allowed when type is 'image'" });
    }
  });

const Message = z.union([z.string(), z.array(ContentPart)]);

export const AtifToolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()).describe('a JSON object; parse argument strings first'),
  extra: Extra,
});

export const SubagentTrajectoryRef = z
  .strictObject({
    trajectory_id: z.string().nullable().optional(),
    trajectory_path: z.string().nullable().optional(),
    session_id: z.string().nullable().optional(),
    extra: Extra,
  })
  .refine((r) => Boolean(r.trajectory_id?.trim()) || Boolean(r.trajectory_path?.trim()), {
    message: 'a subagent_trajectory_ref needs a trajectory_id or a trajectory_path',
  });

export const ObservationResult = z.strictObject({
  source_call_id: z.string().nullable().optional(),
  content: Message.nullable().optional(),
  subagent_trajectory_ref: z.array(SubagentTrajectoryRef).nullable().optional(),
  extra: Extra,
});

export const Observation = z.strictObject({ results: z.array(ObservationResult) });

export const AtifMetrics = z.strictObject({
  prompt_tokens: z.number().int().nullable().optional(),
  completion_tokens: z.number().int().nullable().optional(),
  cached_tokens: z.number().int().nullable().optional(),
  cost_usd: z.number().nullable().optional(),
  prompt_token_ids: z.array(z.number().int()).nullable().optional(),
  completion_token_ids: z.array(z.number().int()).nullable().optional(),
  logprobs: z.array(z.number()).nullable().optional(),
  extra: Extra,
});

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

export const AtifStep = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: AtifTimestamp.nullable().optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().nullable().optional(),
    reasoning_effort: z.union([z.string(), z.number()]).nullable().optional(),
    message: Message,
    reasoning_content: z.string().nullable().optional(),
    tool_calls: z.array(AtifToolCall).nullable().optional(),
    observation: Observation.nullable().optional(),
    metrics: AtifMetrics.nullable().optional(),
    is_copied_context: z.boolean().nullable().optional(),
    llm_call_count: z.number().int().min(0).nullable().optional(),
    extra: Extra,
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const field of AGENT_ONLY) {
        if (step[field] != null) {
          ctx.addIssue({ code: 'custom', path: [field], message: `Field '${field}' is only applicable when source is 'agent', but source is '${step.source}'` });
        }
      }
    }
    if (step.source === 'agent' && step.llm_call_count === 0) {
      for (const field of ['metrics', 'reasoning_content'] as const) {
        if (step[field] != null) ctx.addIssue({ code: 'custom', path: [field], message: `'${field}' must be absent when llm_call_count is 0` });
      }
    }
    const ids = new Set<string>();
    step.tool_calls?.forEach((call, j) => {
      if (ids.has(call.tool_call_id)) {
        ctx.addIssue({ code: 'custom', path: ['tool_calls', j, 'tool_call_id'], message: `step ${step.step_id} has duplicate tool_call_id '${call.tool_call_id}'` });
      }
      ids.add(call.tool_call_id);
    });
    step.observation?.results.forEach((r, j) => {
      if (r.source_call_id != null && !ids.has(r.source_call_id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', j, 'source_call_id'],
          message: `Observation result references source_call_id '${r.source_call_id}' which is not found in step ${step.step_id}'s tool_calls`,
        });
      }
    });
  });

export const AtifAgent = z.strictObject({
  name: z.string(),
  version: z.string(),
  model_name: z.string().nullable().optional(),
  tool_definitions: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
  extra: Extra,
});

export const AtifFinalMetrics = z.strictObject({
  total_prompt_tokens: z.number().int().nullable().optional(),
  total_completion_tokens: z.number().int().nullable().optional(),
  total_cached_tokens: z.number().int().nullable().optional(),
  total_cost_usd: z.number().nullable().optional(),
  total_steps: z.number().int().min(0).nullable().optional(),
  extra: Extra,
});

interface TrajectoryShape {
  steps: { step_id: number; observation?: { results: { subagent_trajectory_ref?: { trajectory_id?: string | null; trajectory_path?: string | null }[] | null | undefined }[] } | null | undefined }[];
  subagent_trajectories?: { trajectory_id?: string | null | undefined }[] | null | undefined;
}

function checkTrajectory(t: TrajectoryShape, ctx: z.RefinementCtx): void {
  t.steps.forEach((step, i) => {
    if (step.step_id !== i + 1) {
      ctx.addIssue({ code: 'custom', path: ['steps', i, 'step_id'], message: `expected ${i + 1} (sequential from 1), got ${step.step_id}` });
    }
  });
  const embedded = new Set<string>();
  t.subagent_trajectories?.forEach((sub, i) => {
    const id = sub.trajectory_id;
    if (id == null || id.trim() === '') {
      ctx.addIssue({ code: 'custom', path: ['subagent_trajectories', i, 'trajectory_id'], message: 'an embedded subagent trajectory needs a trajectory_id' });
    } else if (embedded.has(id)) {
      ctx.addIssue({ code: 'custom', path: ['subagent_trajectories', i, 'trajectory_id'], message: `duplicate embedded trajectory_id '${id}'` });
    } else {
      embedded.add(id);
    }
  });
  t.steps.forEach((step, i) => {
    step.observation?.results.forEach((r, j) => {
      r.subagent_trajectory_ref?.forEach((ref, k) => {
        if (!ref.trajectory_path?.trim() && ref.trajectory_id?.trim() && !embedded.has(ref.trajectory_id)) {
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'observation', 'results', j, 'subagent_trajectory_ref', k, 'trajectory_id'],
            message: `trajectory_id '${ref.trajectory_id}' has no trajectory_path and matches no embedded subagent trajectory`,
          });
        }
      });
    });
  });
}

const trajectoryShape = {
  schema_version: z.enum(ATIF_VERSIONS),
  session_id: z.string().nullable().optional(),
  trajectory_id: z.string().nullable().optional(),
  agent: AtifAgent,
  steps: z.array(AtifStep).min(1),
  notes: z.string().nullable().optional(),
  final_metrics: AtifFinalMetrics.nullable().optional(),
  continued_trajectory_ref: z.string().nullable().optional(),
  extra: Extra,
};

export const AtifTrajectory = z
  .strictObject({
    ...trajectoryShape,
    get subagent_trajectories() {
      return z.array(AtifTrajectoryNested).nullable().optional();
    },
  })
  .superRefine((t, ctx) => checkTrajectory(t as TrajectoryShape, ctx))
  .describe('ATIF trajectory.json (Harbor Agent Trajectory Interchange Format, v1.0-v1.7)');

// Recursion: an embedded subagent is a full, independently valid trajectory, and may embed its own.
const AtifTrajectoryNested: z.ZodType<unknown> = z.lazy(() => AtifTrajectory);

export type AtifTrajectory = z.infer<typeof AtifTrajectory>;
