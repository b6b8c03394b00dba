/**
 * `roller slurm` on a real Slurm cluster (slurmctld + slurmd + munge on loopback, started by the test): the demo tasks
 * as a 3-shard array and a merge job that waits for it, through the real Claude Code CLI on an API model (the scripted
 * model served with a key: each job's roller holds it from the submitting environment, the harness a stand-in); the
 * merged run validates and is the one-process run but for times, the merge, and what the CLI draws at random.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { info, roller } from '../support/collect-run.js';
import { comparableRun } from '../support/comparable-run.js';
import { repoRoot } from '../support/paths.js';
import { runDifferences, runFiles } from '../support/run-equality.js';
import { jobEnd, startTestCluster } from '../support/slurm-cluster.js';
import { sh } from '../support/sh.js';
import { filesHolding } from '../support/files-holding.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

const cluster = startTestCluster();
const tmp = useTempDir('slurm');
const provider = useScriptedProvider(tmp);
const collectArgs = () => ['--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--model', 'api/claude-code', '--model-config', provider.models, '--capture-calls'];

describe.skipIf('reason' in cluster)(`roller slurm on a real single-node cluster${'reason' in cluster ? ` (skipped: ${cluster.reason})` : ''}`, () => {
  it('a 3-shard array and its merge job make the run a single process makes', async () => {
    if ('reason' in cluster) return;
    const out = join(tmp.path, 'runs');
    const one = await roller(['collect', ...collectArgs(), '--output', join(tmp.path, 'one'), '--run-name', 'demo'], { env: provider.env });
    expect(one.code, one.stderr).toBe(0);

    const submitted = await roller(['slurm', '--shards', '3', '--', ...collectArgs(), '--output', out, '--run-name', 'demo'], { env: { ...cluster.env, ROLLER_E2E_API_KEY: provider.key } });
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobs = JSON.parse(submitted.stdout) as { shards_job: string; merge_job: string; run_dir: string; scripts: string };
    expect(await jobEnd(cluster, jobs.merge_job, 8 * 60_000)).toBe('COMPLETED');
    for (const i of [0, 1, 2]) expect(cluster.run(['scontrol', 'show', 'job', `${jobs.shards_job}_${i}`]).stdout).toMatch(/JobState=COMPLETED/);
    // Each array task ran its own shard, found from Slurm's variables.
    for (const i of [0, 1, 2]) expect(readFileSync(join(jobs.scripts, 'logs', `shard-${i}.out`), 'utf8').trim()).toBe(join(out, `demo.shard-${i}-of-3`));
    expect(readFileSync(join(jobs.scripts, 'logs', 'merge.err'), 'utf8')).toMatch(/3 samples from 3 parts/);

    const merged = join(out, 'demo');
    expect(jobs.run_dir).toBe(merged);
    expect((await roller(['validate-run', merged])).code).toBe(0);
    expect(info(merged).samples.map((s) => [s.index, s.status])).toEqual([[0, 'ok'], [1, 'ok'], [2, 'ok']]);
    const reference = join(tmp.path, 'one', 'demo');
    const sampleFiles = (dir: string) => runFiles(dir).filter((f) => f.startsWith('samples/'));
    expect(runDifferences(reference, merged, { harnessRandom: true, skip: [...sampleFiles(reference), ...sampleFiles(merged)] })).toEqual([]);
    expect(comparableRun(merged)).toEqual(comparableRun(reference));
    // The key reached the jobs' roller through the environment only: no script, log or file of the run holds it.
    expect(filesHolding(provider.key, [jobs.scripts, merged, join(out, 'demo.shard-0-of-3')].filter((d) => existsSync(d)))).toEqual([]);
  }, 12 * 60_000);

  it('sbatch failing (no SLURM_CONF exported, so no cluster found): exit 69 with sbatch\'s words and the hint, not a usage error', async () => {
    if ('reason' in cluster) return;
    const { SLURM_CONF: _conf, ...noConf } = cluster.env;
    const r = await roller(['slurm', '--shards', '2', '--', ...collectArgs(), '--output', join(tmp.path, 'noconf'), '--run-name', 'demo'], { env: noConf });
    expect(r.code, r.stderr).toBe(69);
    expect(r.stderr).toMatch(/sbatch .* failed: .*\(is SLURM_CONF exported\? scripts\/slurm-cluster\.sh start prints it\) \[ROLLER_SERVICE_UNAVAILABLE\]/s);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('one element resubmitted alone (sbatch --array=1, as docs/scaling.md says for a failed shard) is still shard 1 of 3; the merge then joins all three', async () => {
    if ('reason' in cluster) return;
    const out = join(tmp.path, 'rerun');
    const env = { ...cluster.env, ROLLER_E2E_API_KEY: provider.key };
    const written = await roller(['slurm', '--shards', '3', '--no-submit', '--', ...collectArgs(), '--output', out, '--run-name', 'demo'], { env });
    expect(written.code, written.stderr).toBe(0);
    const scripts = written.stdout.trim();
    // The jobs' roller takes the model's key from the submitting environment (sbatch exports it).
    const sbatch = (args: string[]) => sh(['sbatch', '--parsable', ...args], env).stdout.trim().split(';')[0]!;
    // Elements 0 and 2 as one array (element 1 as if it had failed), then element 1 alone: its own array of one.
    expect(await jobEnd(cluster, sbatch(['--array=0,2', join(scripts, 'shards.sbatch')]), 8 * 60_000)).toBe('COMPLETED');
    expect(await jobEnd(cluster, sbatch(['--array=1', join(scripts, 'shards.sbatch')]), 8 * 60_000)).toBe('COMPLETED');
    expect(readFileSync(join(scripts, 'logs', 'shard-1.out'), 'utf8').trim()).toBe(join(out, 'demo.shard-1-of-3'));
    expect(existsSync(join(out, 'demo.shard-0-of-1'))).toBe(false);
    expect(await jobEnd(cluster, sbatch([join(scripts, 'merge.sbatch')]), 8 * 60_000)).toBe('COMPLETED');
    expect(info(join(out, 'demo')).samples.map((s) => [s.index, s.status])).toEqual([[0, 'ok'], [1, 'ok'], [2, 'ok']]);
  }, 12 * 60_000);

  it('an element stopped by scancel mid-sample: the afterany merge refuses the run and names the sbatch line that finishes it; that line run, the run is whole', async () => {
    if ('reason' in cluster) return;
    const out = join(tmp.path, 'cancelled');
    const env = { ...cluster.env, ROLLER_E2E_API_KEY: provider.key };
    // Request 1 (shard 1 of 3) waits 10 s in a tool: time to cancel it mid-sample.
    const tasks = join(tmp.path, 'cancel-tasks.jsonl');
    writeFileSync(tasks, [{ id: 'a', prompt: '[HELLO] one' }, { id: 'slow', prompt: '[SLEEP] Wait a while.' }, { id: 'c', prompt: '[HELLO] three' }].map((t) => JSON.stringify(t)).join('\n') + '\n');
    const args = ['--tasks', tasks, '--harness', 'claude-code', '--model', 'api/claude-code', '--model-config', provider.models, '--capture-calls', '--output', out, '--run-name', 'demo'];
    const submitted = await roller(['slurm', '--shards', '3', '--', ...args], { env });
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobs = JSON.parse(submitted.stdout) as { shards_job: string; merge_job: string; scripts: string };
    // Cancelled once its sample has begun (the shard's sample directory is there), as a user's scancel would.
    const shard1 = join(out, 'demo.shard-1-of-3');
    const deadline = Date.now() + 4 * 60_000;
    while (!existsSync(join(shard1, 'samples')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2000));
    expect(cluster.run(['scancel', `${jobs.shards_job}_1`]).code).toBe(0);
    expect(await jobEnd(cluster, jobs.merge_job, 8 * 60_000)).toBe('FAILED');
    const refused = readFileSync(join(jobs.scripts, 'logs', 'merge.err'), 'utf8');
    expect(refused).toMatch(/shard 1\/3 .*interrupted|shard 1\/3 .*stopped while/);
    expect(existsSync(join(out, 'demo'))).toBe(false);
    // The line it names, run as given: element 1 again (still shard 1 of 3), then the merge after it.
    const line = /run it again: (JOB=.*)$/m.exec(refused)?.[1];
    expect(line, refused).toMatch(/--array=1 /);
    const again = sh(['bash', '-c', `set -e; ${line}`], env);
    expect(again.code, again.stderr).toBe(0);
    const mergeJob = again.stdout.trim().split(/\s+/).pop()!.split(';')[0]!;
    expect(await jobEnd(cluster, mergeJob, 8 * 60_000)).toBe('COMPLETED');
    expect(info(join(out, 'demo')).samples.map((s) => [s.index, s.status])).toEqual([[0, 'ok'], [1, 'ok'], [2, 'ok']]);
  }, 14 * 60_000);
});
