import { describe, expect, it } from 'vitest';
import { inShard, parseShard, runLockDigest, shardFromEnv, shardRunName } from '../../../src/pipelines/scale/shard.js';
import type { Lock } from '../../../src/schemas/index.js';

describe('shards', () => {
  it('split the requests round-robin: every index in exactly one shard, every shard its share of each model', () => {
    const indexes = Array.from({ length: 10 }, (_, i) => i);
    const shards = [0, 1, 2].map((i) => indexes.filter((j) => inShard(j, { index: i, count: 3 })));
    expect(shards).toEqual([[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]);
    expect(indexes.every((j) => inShard(j, undefined))).toBe(true);
    expect(shardRunName('demo', { index: 2, count: 3 })).toBe('demo.shard-2-of-3');
  });

  it('I/N is checked; env comes from ROLLER_SHARD, a Slurm array (less its first id) or a Kubernetes Indexed Job', () => {
    expect(parseShard('1/4')).toEqual({ index: 1, count: 4 });
    for (const bad of ['4/4', '1', '-1/3', '0/0', 'a/b']) expect(() => parseShard(bad, {})).toThrow(/--shard|does not exist/);
    expect(parseShard('env', { ROLLER_SHARD: '2/5' })).toEqual({ index: 2, count: 5 });
    expect(shardFromEnv({ SLURM_ARRAY_TASK_ID: '7', SLURM_ARRAY_TASK_MIN: '5', SLURM_ARRAY_TASK_COUNT: '3' })).toEqual({ index: 2, count: 3 });
    // roller slurm's script pins the count: element 2 resubmitted alone (sbatch --array=2) is still shard 2 of 3.
    expect(shardFromEnv({ SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_MIN: '2', SLURM_ARRAY_TASK_COUNT: '1', ROLLER_SHARD_COUNT: '3' })).toEqual({ index: 2, count: 3 });
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '0', ROLLER_SHARD_COUNT: '4' })).toEqual({ index: 0, count: 4 });
    expect(() => shardFromEnv({ JOB_COMPLETION_INDEX: '0' })).toThrow(/ROLLER_SHARD_COUNT/);
    expect(() => shardFromEnv({ SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '3', SLURM_ARRAY_TASK_STEP: '2' })).toThrow(/step 2/);
    expect(() => shardFromEnv({ SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_COUNT: '3' })).toThrow(/shard 3 of 3 does not exist/);
    expect(() => shardFromEnv({})).toThrow(/none of ROLLER_SHARD/);
  });

  it("the run's lock digest ignores when the lock was written and which part wrote it, nothing else", () => {
    const lock = { schema: 'roller.lock/v1', roller_version: '1', created_at: '2026-01-01T00:00:00Z', requests: [], task_bundle_digest: `sha256:${'0'.repeat(64)}`, harness: { name: 'claude-code', version: '2' }, models: {}, image_id: null, timeout_s: 600, options: { thinking: null, keep_thinking: true, wire_trace: 'actf', cache_trace: false, capture_calls: false } } as unknown as Lock;
    const digest = runLockDigest(lock);
    expect(runLockDigest({ ...lock, created_at: '2027-01-01T00:00:00Z', part: { kind: 'shard', index: 1, count: 2, run_lock_digest: digest } })).toBe(digest);
    expect(runLockDigest({ ...lock, timeout_s: 300 })).not.toBe(digest);
    expect(runLockDigest({ ...lock, roller_version: '2' })).not.toBe(digest);
  });
});
