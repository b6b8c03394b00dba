import type { ActfStep } from '../../schemas/actf.js';

/** A new ACTF step: the user input that preceded it, nothing from the assistant yet (adapters fill it in). */
export function newStep(stepId: number, userContent: ActfStep['user_content'], at: string | null): ActfStep {
  return {
    step_id: stepId,
    user_content: userContent,
    assistant_content: { reasoning_content: null, content: '', tool_calls: [] },
    observation: [],
    metric: null,
    started_at: at,
    finished_at: at,
    stop_reason: null,
  };
}

/** ACTF timing from the first step's start to the last step's end (null where a step has no time). */
export function timingOf(steps: readonly ActfStep[]): { started_at: string | null; finished_at: string | null; duration_ms: number | null } {
  const started = steps[0]?.started_at ?? null;
  const finished = steps.at(-1)?.finished_at ?? null;
  return { started_at: started, finished_at: finished, duration_ms: started && finished ? Math.max(0, Date.parse(finished) - Date.parse(started)) : null };
}
