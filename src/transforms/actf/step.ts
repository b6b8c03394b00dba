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
