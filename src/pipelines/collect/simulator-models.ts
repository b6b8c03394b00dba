import { ErrorCode, RollerError, isRollerError } from '../../core/errors.js';
import type { HarnessRunner } from '../../harnesses/adapter.js';
import type { Task } from '../../schemas/task.js';
import { resolveModel, type ModelConfigFile, type ResolvedModel } from './models.js';

/**
 * The models the tasks' user simulators name, resolved as --model ids are (scripted/… or --model-config entries),
 * before anything runs; a harness that cannot read its reply or continue its session cannot hold a dialogue.
 */
export function resolveSimulators(tasks: readonly Task[], harness: string, runner: HarnessRunner, config: ModelConfigFile, tasksFile: string): Map<string, ResolvedModel> {
  const simulators = new Map<string, ResolvedModel>();
  for (const task of tasks) {
    const spec = task.user_simulator;
    if (!spec) continue;
    if (!runner.replyOfStdout || !runner.sessionOfStdout) {
      throw new RollerError(
        ErrorCode.INVALID_OPTIONS,
        `${tasksFile}: task '${task.id}' has a user_simulator; a simulated dialogue reads each reply from the harness's stdout and continues its session, implemented for claude-code, codex, opencode and pi in this version, not ${harness}`,
      );
    }
    if (simulators.has(spec.model)) continue;
    try {
      simulators.set(spec.model, resolveModel(spec.model, config));
    } catch (err) {
      if (!isRollerError(err)) throw err;
      throw new RollerError(err.code, `${tasksFile}: task '${task.id}' user_simulator.model: ${err.message}`);
    }
  }
  return simulators;
}
