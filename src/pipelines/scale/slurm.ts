import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { shellWord, type LaunchPlan } from './launch-plan.js';

export interface SlurmOptions {
  plan: LaunchPlan;
  /** The roller command the jobs run: this roller's node and bin/roller, by absolute path (the cluster shares them). */
  roller: string[];
  /** The directory the jobs run in (--output is relative to it). */
  workDir: string;
  /** Extra `#SBATCH` options for the shard array (--partition, --time, --cpus-per-task, --mem, …). */
  sbatchOptions: string[];
  /** At most this many shards at once (sbatch --array=0-(N-1)%M). */
  maxRunning?: number;
}

export interface SlurmScripts {
  dir: string;
  shards: string;
  merge: string;
}

/**
 * Every value a script holds, checked: a control character (a newline above all) would end the line it is on, and
 * what follows would run as a command; Slurm reads `#SBATCH` lines itself, without a shell's quoting, so the values
 * there (the job name, the log paths) may hold no blank or quote either.
 */
function refuseUnsafeValues(o: SlurmOptions, dir: string): void {
  const values: [string, string][] = [
    ['--run-name', o.plan.runName],
    ['--output', o.plan.output],
    ['the working directory', o.workDir],
    ...o.roller.map((v): [string, string] => ["roller's own path", v]),
    ...[...o.plan.shardArgs, ...o.plan.mergeArgs].map((v): [string, string] => ['a collect argument', v]),
    ...o.sbatchOptions.map((v): [string, string] => ['--sbatch-option', v]),
  ];
  for (const [what, value] of values) {
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${JSON.stringify(value)} holds a newline or another control character, which would end its line of the sbatch script (and what follows would run as a command); choose one without`);
  }
  for (const [what, value] of [['--run-name', o.plan.runName], ['the scripts\' directory (from --output)', dir], ...o.sbatchOptions.map((v) => ['--sbatch-option', v])] as const) {
    if (/[\s'"\\`$]/.test(value)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${JSON.stringify(value)} goes on an #SBATCH line, which Slurm reads without a shell's quoting: it may hold no blank, quote, backslash, \` or $`);
  }
}

/** Writes <output>/<run-name>.slurm/{shards,merge}.sbatch and a logs/ directory beside them. */
export async function writeSlurmScripts(o: SlurmOptions): Promise<SlurmScripts> {
  const dir = resolve(o.workDir, o.plan.output, `${o.plan.runName}.slurm`);
  refuseUnsafeValues(o, dir);
  await mkdir(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  const array = `0-${o.plan.shards - 1}${o.maxRunning ? `%${o.maxRunning}` : ''}`;
  const header = (name: string, extra: string[]) =>
    ['#!/bin/bash', `#SBATCH --job-name=${name}`, ...extra.map((x) => `#SBATCH ${x}`), 'set -euo pipefail', `cd ${shellWord(o.workDir)}`, `export PATH=${shellWord(dirname(o.roller[0]!))}:"$PATH"`];
  const shards = [
    ...header(`roller-${o.plan.runName}`, [`--array=${array}`, `--output=${join(dir, 'logs', 'shard-%a.out')}`, `--error=${join(dir, 'logs', 'shard-%a.err')}`, ...o.sbatchOptions]),
    // The shard is the array task's id, of the count pinned here: an element resubmitted alone keeps its shard.
    `export ROLLER_SHARD_COUNT=${o.plan.shards}`,
    `exec ${[...o.roller, ...o.plan.shardArgs].map(shellWord).join(' ')}`,
    '',
  ].join('\n');
  // A shard that did not finish (scancel, a node lost) is refused by the merge, which names this line for it.
  const resubmit = `JOB=$(sbatch --parsable --array={shard} ${shellWord(join(dir, 'shards.sbatch'))}) && sbatch --dependency=afterany:$JOB ${shellWord(join(dir, 'merge.sbatch'))}`;
  const merge = [
    ...header(`roller-${o.plan.runName}-merge`, [`--output=${join(dir, 'logs', 'merge.out')}`, `--error=${join(dir, 'logs', 'merge.err')}`]),
    `exec ${[...o.roller, ...o.plan.mergeArgs, '--resubmit', resubmit].map(shellWord).join(' ')}`,
    '',
  ].join('\n');
  const paths = { dir, shards: join(dir, 'shards.sbatch'), merge: join(dir, 'merge.sbatch') };
  await writeFile(paths.shards, shards, { mode: 0o700 });
  await writeFile(paths.merge, merge, { mode: 0o700 });
  return paths;
}

/**
 * Submits the shard array, then the merge with --dependency=afterany on it: the merge runs whatever became of the
 * shards, refuses a shard that did not finish and names the sbatch line that runs it again (and the merge after it).
 */
export async function submitSlurm(scripts: SlurmScripts, sbatch = 'sbatch'): Promise<{ shardsJob: string; mergeJob: string }> {
  const run = async (args: string[]): Promise<string> => {
    try {
      const { stdout } = await promisify(execFile)(sbatch, ['--parsable', ...args]);
      return stdout.trim().split(';')[0]!;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT') throw new RollerError(ErrorCode.SERVICE_UNAVAILABLE, `${sbatch} is not on this machine's PATH: submit from a Slurm login node, or write the scripts only (--no-submit) and sbatch them there`);
      throw new RollerError(ErrorCode.SERVICE_UNAVAILABLE, `sbatch ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim()}${/SLURM_CONF|slurm\.conf|Unable to contact|configuration source|fetch config/i.test(e.stderr ?? '') ? ' (is SLURM_CONF exported? scripts/slurm-cluster.sh start prints it)' : ''}`);
    }
  };
  const shardsJob = await run([scripts.shards]);
  const mergeJob = await run([`--dependency=afterany:${shardsJob}`, '--kill-on-invalid-dep=yes', scripts.merge]);
  return { shardsJob, mergeJob };
}
