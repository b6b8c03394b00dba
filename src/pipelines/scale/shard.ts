import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { Lock } from '../../schemas/lock.js';

/** One of N shards of a run: the requests whose index ≡ index (mod count), in request order. */
export interface Shard {
  index: number;
  count: number;
}

/**
 * Round-robin, not contiguous: a run's requests are models × tasks (all tasks of the first model, then the next), so
 * a contiguous split would hand one shard one model's samples and another the next model's; round-robin spreads
 * every model and every task size over all shards.
 */
export function inShard(index: number, shard: Shard | null | undefined): boolean {
  return !shard || index % shard.count === shard.index;
}

/** `I/N` (0 ≤ I < N) or `env`: the engine's own variables (shardFromEnv). */
export function parseShard(text: string, env: NodeJS.ProcessEnv = process.env): Shard {
  if (text === 'env') return shardFromEnv(env);
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--shard ${text}: I/N (shard I of N, counted from 0: 0/3, 1/3, 2/3) or env`);
  return checkedShard(Number(m[1]), Number(m[2]), `--shard ${text}`);
}

/**
 * The shard a cluster engine gave this process: ROLLER_SHARD (I/N) first; a Slurm array task (its id less the array's
 * first id, of SLURM_ARRAY_TASK_COUNT); a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (of ROLLER_SHARD_COUNT, which
 * the manifest sets: the pod is not told its Job's completions).
 */
export function shardFromEnv(env: NodeJS.ProcessEnv): Shard {
  if (env.ROLLER_SHARD) return parseShard(env.ROLLER_SHARD, {});
  if (env.SLURM_ARRAY_TASK_ID !== undefined) {
    const id = int(env.SLURM_ARRAY_TASK_ID, 'SLURM_ARRAY_TASK_ID');
    const min = env.SLURM_ARRAY_TASK_MIN !== undefined ? int(env.SLURM_ARRAY_TASK_MIN, 'SLURM_ARRAY_TASK_MIN') : 0;
    // roller slurm's script pins the run's shard count: the array task id is then the shard itself, so one element
    // resubmitted alone (sbatch --array=I) is still shard I of N, not shard 0 of an array of one.
    if (env.ROLLER_SHARD_COUNT !== undefined) return checkedShard(id, int(env.ROLLER_SHARD_COUNT, 'ROLLER_SHARD_COUNT'), `--shard env (SLURM_ARRAY_TASK_ID=${id}, ROLLER_SHARD_COUNT=${env.ROLLER_SHARD_COUNT})`);
    const count = env.SLURM_ARRAY_TASK_COUNT;
    if (count === undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--shard env: SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT (nor ROLLER_SHARD_COUNT): submit with sbatch --array=0-(N-1)');
    // An array with a step (--array=0-10:2) numbers its tasks apart: the shard is then not id - min.
    if (env.SLURM_ARRAY_TASK_STEP !== undefined && env.SLURM_ARRAY_TASK_STEP !== '1') throw new RollerError(ErrorCode.INVALID_OPTIONS, `--shard env: the Slurm array has step ${env.SLURM_ARRAY_TASK_STEP}; submit --array=0-(N-1) (roller slurm does)`);
    return checkedShard(id - min, int(count, 'the shard count'), `--shard env (SLURM_ARRAY_TASK_ID=${id}, SLURM_ARRAY_TASK_MIN=${min}, count ${count})`);
  }
  if (env.JOB_COMPLETION_INDEX !== undefined) {
    if (env.ROLLER_SHARD_COUNT === undefined) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--shard env: JOB_COMPLETION_INDEX is set but not ROLLER_SHARD_COUNT (the Job\'s completions): roller k8s sets it in the manifest');
    return checkedShard(int(env.JOB_COMPLETION_INDEX, 'JOB_COMPLETION_INDEX'), int(env.ROLLER_SHARD_COUNT, 'ROLLER_SHARD_COUNT'), `--shard env (JOB_COMPLETION_INDEX=${env.JOB_COMPLETION_INDEX})`);
  }
  throw new RollerError(ErrorCode.INVALID_OPTIONS, '--shard env: none of ROLLER_SHARD (I/N), SLURM_ARRAY_TASK_ID + SLURM_ARRAY_TASK_COUNT, JOB_COMPLETION_INDEX + ROLLER_SHARD_COUNT is set');
}

function int(text: string, what: string): number {
  if (!/^\d+$/.test(text.trim())) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--shard env: ${what} is '${text}', not a whole number`);
  return Number(text);
}

function checkedShard(index: number, count: number, what: string): Shard {
  if (count < 1 || index >= count) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what}: shard ${index} of ${count} does not exist (0 ≤ I < N)`);
  return { index, count };
}

/** A shard's run directory name: the run's name and the shard, so every shard of a run lands beside the others. */
export function shardRunName(runName: string, shard: Shard): string {
  return `${runName}.shard-${shard.index}-of-${shard.count}`;
}

/**
 * The whole run's lock digest: sha256 of the lock's canonical JSON without what a shard or a time adds (created_at,
 * part). Every shard of a run records the same one; a merge refuses parts whose digests differ.
 */
export function runLockDigest(lock: Lock): string {
  const { created_at: _time, part: _part, ...rest } = lock;
  return `sha256:${createHash('sha256').update(stableStringify(rest)).digest('hex')}`;
}
