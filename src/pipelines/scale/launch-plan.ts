import { join } from 'node:path';
import { shardRunName } from './shard.js';

/** What every engine launches for a sharded run: N processes of one command, then one merge. */
export interface LaunchPlan {
  runName: string;
  /** --output as the collect arguments give it (relative to the working directory the jobs run in). */
  output: string;
  shards: number;
  /** The shard command's arguments after `roller` (the shard itself comes from the engine: --shard env). */
  shardArgs: string[];
  /** The merge command's arguments after `roller`. */
  mergeArgs: string[];
  /** Where the merged run appears. */
  runDir: string;
}

/**
 * One plan for Slurm, Kubernetes and a hand-run loop alike: `roller collect ARGS --shard env --resume` per shard (a
 * shard the engine runs again — a requeued array task, a pod retried — continues where it stopped), then `roller merge`
 * of every shard's directory into <output>/<run-name>.
 */
export function launchPlan(collectArgs: readonly string[], p: { runName: string; output: string; shards: number }): LaunchPlan {
  const shardDirs = Array.from({ length: p.shards }, (_, i) => join(p.output, shardRunName(p.runName, { index: i, count: p.shards })));
  const runDir = join(p.output, p.runName);
  return {
    runName: p.runName,
    output: p.output,
    shards: p.shards,
    shardArgs: ['collect', ...collectArgs, '--shard', 'env', '--resume'],
    mergeArgs: ['merge', ...shardDirs, '--output', runDir],
    runDir,
  };
}

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
