import { ErrorCode, isRollerError } from '../../core/errors.js';
import type { HarnessRunner } from '../../harnesses/adapter.js';
import type { Task } from '../../schemas/task.js';
import type { UserSimulator } from './user-simulator.js';

/** After a turn that ended well: the next user message, the end of the dialogue, or why it cannot go on. */
export type NextPrompt = { kind: 'next'; text: string } | { kind: 'end' } | { kind: 'fail'; code: string; message: string };

/** Where a sample's user messages come from: the task's fixed prompts, or a user simulator answering each reply. */
export interface PromptSource {
  readonly first: string;
  /** Prompt k (0-based) is known to be the last one (fixed prompts; a simulator decides after each reply). */
  isLast(k: number): boolean;
  /** Prompt k finished well (its stdout at stdoutPath): what comes next. */
  next(k: number, stdoutPath: string): Promise<NextPrompt>;
}

export function fixedPrompts(task: Task): PromptSource {
  const prompts = [task.prompt, ...(task.followups ?? [])];
  return {
    first: task.prompt,
    isLast: (k) => k === prompts.length - 1,
    next: async (k) => (k + 1 < prompts.length ? { kind: 'next', text: prompts[k + 1]! } : { kind: 'end' }),
  };
}

/**
 * The dialogue of a user-simulator task (seeds/003 §2.3): after each Task Agent turn the simulator reads the reply the
 * user saw and answers; its stop marker, the turn limit or a failure ends it, each recorded as the termination.
 */
export function simulatedPrompts(task: Task, sim: UserSimulator, runner: HarnessRunner): PromptSource {
  const maxTurns = sim.spec.max_turns;
  return {
    first: task.prompt,
    isLast: () => false,
    async next(k, stdoutPath) {
      const turn = k + 1;
      const reply = await runner.replyOfStdout!(stdoutPath);
      if (reply === null) {
        const message = `turn ${turn}: the harness printed no reply on stdout, so the user simulator has nothing to answer`;
        sim.end({ reason: 'task_agent_failed', after_turn: turn, detail: message });
        return { kind: 'fail', code: ErrorCode.HARNESS_FAILED, message };
      }
      let answer;
      try {
        answer = await sim.answer(reply, turn);
      } catch (err) {
        sim.end({ reason: 'simulator_failed', after_turn: turn, detail: (err as Error).message });
        return { kind: 'fail', code: isRollerError(err) ? err.code : ErrorCode.USER_SIMULATOR_FAILED, message: (err as Error).message };
      }
      if (answer.kind === 'stop') {
        // Words said alongside the stop reach no one: kept as undelivered.
        if (answer.said) sim.pending.push(answer.said);
        sim.end({ reason: 'simulator_stop', after_turn: turn, detail: null });
        return { kind: 'end' };
      }
      if (turn >= maxTurns) {
        sim.pending.push(answer.text);
        sim.end({ reason: 'max_turns', after_turn: turn, detail: `the task allows ${maxTurns} Task Agent turn(s)` });
        return { kind: 'end' };
      }
      return { kind: 'next', text: answer.text };
    },
  };
}
