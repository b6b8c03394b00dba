/**
 * Shards and `roller merge` on real Claude Code runs (scripted model): a run reprocessed in shards and merged is the run
 * reprocessed whole, byte for byte but for MERGE_VOLATILE; a collect in shards, merged, is a one-process collect but
 * for that and what the CLI draws at random; a shard resumes on its own; and every merge that cannot be right is
 * refused before anything is written, naming what is wrong.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Lock } from '../../src/schemas/index.js';
import { runLockDigest } from '../../src/pipelines/scale/shard.js';
import { info, readJson, roller } from '../support/collect-run.js';
import { comparableRun } from '../support/comparable-run.js';
import { repoRoot, rollerBin } from '../support/paths.js';
import { runDifferences, runFiles } from '../support/run-equality.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('merge');
const demo = join(repoRoot, 'examples/tasks/demo.jsonl');
const collectArgs = ['--tasks', demo, '--harness', 'claude-code', '--model', 'scripted/default', '--capture-calls', '--capture-debug', 'full'];

async function ok(args: string[]): Promise<string> {
  const r = await roller(args);
  expect(r.code, `roller ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r.stdout.trim();
}

/** Copies of the 3 reprocessed shards (rp/s0..s2) under DIR/s0..s2, for a merge that moves or breaks them. */
function copiesOfShards(dir: string): string[] {
  return [0, 1, 2].map((i) => {
    const copy = join(tmp.path, dir, `s${i}`);
    cpSync(join(tmp.path, 'rp', `s${i}`), copy, { recursive: true });
    return copy;
  });
}

/** A merge that must be refused: exit 2, the message, and no output left behind. */
async function refused(parts: string[], output: string, message: RegExp, extra: string[] = []): Promise<void> {
  const r = await roller(['merge', ...parts, '--output', output, ...extra]);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toContain('ROLLER_MERGE_REFUSED');
  expect(existsSync(output)).toBe(false);
  expect(readdirSync(join(output, '..')).filter((n) => n.includes('.merging-'))).toEqual([]);
}

describe('shards and roller merge (real Claude Code runs)', () => {
  let whole = '';
  let out = '';
  beforeAll(async () => {
    out = join(tmp.path, 'runs');
    await ok(['collect', ...collectArgs, '--output', out, '--run-name', 'demo']);
    whole = join(out, 'demo');
  }, 10 * 60_000);

  it('a run reprocessed in 3 shards and merged is the run reprocessed whole, byte for byte (but times and the merge\'s provenance)', async () => {
    const parts = [0, 1, 2].map((i) => join(tmp.path, 'rp', `s${i}`));
    for (const [i, dir] of parts.entries()) await ok(['reprocess', whole, '--shard', `${i}/3`, '--output', dir]);
    const one = join(tmp.path, 'rp', 'whole');
    await ok(['reprocess', whole, '--output', one]);
    const merged = join(tmp.path, 'rp', 'merged');
    // A sink of the user's own gets the merged run's samples, in request order: here a second run-level sft.jsonl.
    const copy = join(tmp.path, 'rp', 'sft-by-sink.jsonl');
    await ok(['merge', ...parts, '--output', merged, '--sink', 'run-sft', '--sink-option', `run-sft.path=${copy}`]);
    expect((await roller(['validate-run', merged])).code).toBe(0);
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(join(one, 'sft.jsonl'), 'utf8'));
    // reprocess.jsonl is each reprocess's own log (what it did, when): the merge keeps the parts' where they are.
    expect(runDifferences(one, merged, { skip: ['reprocess.jsonl'] })).toEqual([]);
    const samples = runFiles(one).filter((f) => f.startsWith('samples/'));
    expect(samples.length).toBeGreaterThan(20);
    // Linked, not copied: the merged sample is the shard's file.
    const first = samples[0]!;
    const shardHolding = parts.find((p) => existsSync(join(p, first)))!;
    expect(statSync(join(merged, first)).ino).toBe(statSync(join(shardHolding, first)).ino);
    expect(info(merged).merged_from?.map((m) => m.part)).toEqual(['shard 0/3', 'shard 1/3', 'shard 2/3']);
  }, 5 * 60_000);

  it('a collect in 2 shards, merged, is the one-process collect (but times, the merge, and what the CLI draws at random); a shard resumes alone', async () => {
    const shardOut = join(tmp.path, 'shards');
    for (const i of [1, 0]) await ok(['collect', ...collectArgs, '--output', shardOut, '--run-name', 'demo', '--shard', `${i}/2`]);
    const parts = [0, 1].map((i) => join(shardOut, `demo.shard-${i}-of-2`));
    expect(info(parts[0]!).samples.map((s) => s.index)).toEqual([0, 2]);
    expect(info(parts[1]!).samples.map((s) => s.index)).toEqual([1]);
    const locks = parts.map((p) => readJson<Lock>(join(p, 'lock.json')));
    expect(locks.map((l) => l.part)).toEqual([
      { kind: 'shard', index: 0, count: 2, run_lock_digest: locks[0]!.part!.run_lock_digest },
      { kind: 'shard', index: 1, count: 2, run_lock_digest: locks[0]!.part!.run_lock_digest },
    ]);
    expect(locks[0]!.requests).toEqual(readJson<Lock>(join(whole, 'lock.json')).requests); // the whole run's requests

    // A shard run again with --resume reuses its finished samples.
    const again = await roller(['collect', ...collectArgs, '--output', shardOut, '--run-name', 'demo', '--shard', '1/2', '--resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(info(parts[1]!).samples.map((s) => s.status)).toEqual(['skipped']);

    const merged = join(tmp.path, 'merged-collect');
    await ok(['merge', ...parts, '--output', merged]);
    expect((await roller(['validate-run', merged])).code).toBe(0);
    expect(info(merged).run_name).toBe('demo');
    expect(info(merged).samples.map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
    // The run's own files field by field; each sample by what two runs of a real CLI share (comparable-run).
    const runLevel = (dir: string) => runFiles(dir).filter((f) => f.startsWith('samples/'));
    expect(runDifferences(whole, merged, { harnessRandom: true, skip: [...runLevel(whole), ...runLevel(merged)] })).toEqual([]);
    expect(comparableRun(merged)).toEqual(comparableRun(whole));
  }, 10 * 60_000);

  it('--move empties the shards into the run', async () => {
    const src = join(tmp.path, 'rp');
    const parts = copiesOfShards('moved');
    const merged = join(tmp.path, 'moved', 'run');
    await ok(['merge', ...parts, '--output', merged, '--move']);
    expect(runDifferences(join(src, 'merged'), merged)).toEqual([]);
    for (const p of parts) expect(existsSync(join(p, 'samples', 'scripted_default')) ? readdirSync(join(p, 'samples', 'scripted_default')) : []).toEqual([]);
  }, 60_000);

  it('--move on a nearly full disk: the samples moved go back to their shards, nothing is lost, exit 74 saying so', async () => {
    // A small tmpfs of its own (a private mount namespace): the shards and the output on it, then filled to the brim,
    // so the moves (renames) succeed and writing sft.jsonl fails with ENOSPC.
    const disk = join(tmp.path, 'small-disk');
    mkdirSync(disk);
    const script = [
      'set -e',
      `mount -t tmpfs -o size=16m tmpfs ${disk}`,
      ...[0, 1, 2].map((i) => `cp -a ${join(tmp.path, 'rp', `s${i}`)} ${disk}/s${i}`),
      `head -c $(( $(df --output=avail -B1 ${disk} | tail -1) - 8192 )) /dev/zero > ${disk}/filler 2>/dev/null || true`,
      `set +e; ${rollerBin} merge ${disk}/s0 ${disk}/s1 ${disk}/s2 --output ${disk}/merged --move 2>${disk}/stderr; echo "exit=$?"`,
      `echo "samples=$(find ${disk}/s0 ${disk}/s1 ${disk}/s2 -name info.json -path '*samples*' | wc -l)"`,
      `echo "left=$(ls -d ${disk}/merged* 2>/dev/null | wc -l)"`,
      `cat ${disk}/stderr`,
    ].join('\n');
    const before = [0, 1, 2].reduce((n, i) => n + info(join(tmp.path, 'rp', `s${i}`)).samples.length, 0);
    const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('exit=74');
    expect(r.stdout).toContain(`samples=${before}`); // every sample back in its shard
    expect(r.stdout).toContain('left=0'); // no half-built run, no .merging-PID
    expect(r.stdout).toMatch(/roller: the disk is full \(ENOSPC[^)]*\)/);
    expect(r.stdout).not.toContain('bug in roller');
  }, 2 * 60_000);

  it('a merge killed mid-way (kill -9 of --move): the next merge takes the samples from its <output>.merging-PID and leaves none behind', async () => {
    const src = join(tmp.path, 'rp');
    const parts = copiesOfShards('killed');
    const merged = join(tmp.path, 'killed', 'run');
    // What `merge --move` killed after its first placements leaves: samples renamed out of their shard into the
    // building directory of a process that is gone.
    const dead = `${merged}.merging-999999999`;
    const row = info(parts[1]!).samples[0]!;
    mkdirSync(join(dead, row.path, '..'), { recursive: true });
    renameSync(join(parts[1]!, row.path), join(dead, row.path));
    const r = await roller(['merge', ...parts, '--output', merged, '--move']);
    expect(r.code, r.stderr).toBe(0);
    expect(runDifferences(join(src, 'merged'), merged)).toEqual([]);
    expect(existsSync(dead)).toBe(false);
  }, 60_000);

  it('refuses, writing nothing: a shard missing or named twice, another split, another run, a sample missing or in two parts, an output in use', async () => {
    const rp = join(tmp.path, 'rp');
    const s = (i: number) => join(rp, `s${i}`);
    const target = join(tmp.path, 'refused', 'run');
    mkdirSync(join(tmp.path, 'refused'));
    await refused([s(0), s(2)], target, /shard 1\/3 of the run is not among the parts/);
    await refused([s(0), s(1), s(2), join(rp, 'whole')], target, /a whole run \(its lock.json names no shard or worker\)/);
    const dup = join(tmp.path, 'refused', 's1-copy');
    cpSync(s(1), dup, { recursive: true });
    await refused([s(0), s(1), dup, s(2)], target, /a shard is named twice: 1\/3 in/);
    // Another split of the same run.
    const half = join(tmp.path, 'refused', 'half0');
    await ok(['reprocess', whole, '--shard', '0/2', '--output', half]);
    await refused([half, s(1), s(2)], target, /the shards split the run in different ways/);
    // A shard of another run: collected with another timeout (the lock field is named).
    const other = join(tmp.path, 'refused', 'other');
    await ok(['collect', ...collectArgs, '--output', other, '--run-name', 'demo', '--shard', '1/3', '--timeout', '300']);
    await refused([s(0), join(other, 'demo.shard-1-of-3'), s(2)], target, /is a part of another run[\s\S]*\$\.timeout_s: 600 -> 300/);
    // A sample a killed shard left unfinished (no info.json) is missing, and named with its shard.
    const cut = join(tmp.path, 'refused', 's2-cut');
    cpSync(s(2), cut, { recursive: true });
    const row = info(cut).samples[0]!;
    rmSync(join(cut, row.path, 'info.json'));
    await refused([s(0), s(1), cut], target, new RegExp(`1 of 3 requests have no finished sample in any part[\\s\\S]*${row.index} ${row.task_id} scripted/default \\(shard 2/3\\)`));
    // A shard that did not finish (scancel, Ctrl-C: info.json says interrupted) is refused with how to finish it.
    const stopped = join(tmp.path, 'refused', 'stopped.shard-1-of-3');
    cpSync(s(1), stopped, { recursive: true });
    writeFileSync(join(stopped, 'info.json'), JSON.stringify({ ...info(stopped), state: 'interrupted' }));
    await refused([s(0), stopped, s(2)], target, /1 part did not finish[\s\S]*shard 1\/3 \(.*stopped.shard-1-of-3\): interrupted; run it again: roller collect --resume with the run's arguments and --shard 1\/3/);
    await refused([s(0), stopped, s(2)], target, /run it again: sbatch --array=1 x.sbatch$/m, ['--resubmit', 'sbatch --array={shard} x.sbatch']);
    // One the engine never started has no directory: named with the same line.
    await refused([s(0), join(tmp.path, 'refused', 'never.shard-1-of-3'), s(2)], target, /shard 1\/3 never started \(no directory\)[\s\S]*Run it: sbatch --array=1 x.sbatch/, ['--resubmit', 'sbatch --array={shard} x.sbatch']);
    // The output already holds something.
    cpSync(s(0), target, { recursive: true });
    const r = await roller(['merge', s(0), s(1), s(2), '--output', target]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is there and not empty/);
    rmSync(target, { recursive: true });
    // Parts from someone else: a task id that climbs out of the run (lock and digest made to match) is refused.
    const evil = [0, 1, 2].map((i) => join(tmp.path, 'refused', `evil${i}`));
    for (const [i, p] of evil.entries()) {
      cpSync(s(i), p, { recursive: true });
      const lock = readJson<Lock>(join(p, 'lock.json'));
      lock.requests[0]!.task_id = '../../../../escaped';
      const { part, ...rest } = lock;
      writeFileSync(join(p, 'lock.json'), JSON.stringify({ ...lock, part: { ...part!, run_lock_digest: runLockDigest(rest as Lock) } }));
    }
    await refused(evil, target, /request 0's task id "..\/..\/..\/..\/escaped" is not one plain path segment/);
    // A link in a sample, to a JSON file outside: a reader of the merged run (its sft.jsonl) would follow it.
    const linked = [0, 1, 2].map((i) => join(tmp.path, 'refused', `linked${i}`));
    for (const [i, p] of linked.entries()) cpSync(s(i), p, { recursive: true });
    const outside = join(tmp.path, 'refused', 'outside.json');
    writeFileSync(outside, JSON.stringify({ secret: 'outside the shard' }));
    const victim = join(linked[0]!, info(linked[0]!).samples[0]!.path, 'trace_SFT.json');
    rmSync(victim);
    symlinkSync(outside, victim);
    await refused(linked, target, /trace_SFT.json: a symbolic link \(to .*outside.json\); roller never writes one into a sample/);
    await refused(linked, target, /trace_SFT.json: a symbolic link/, ['--move']);
    for (const p of linked) expect(info(p).samples.every((x) => existsSync(join(p, x.path, 'info.json')))).toBe(true); // nothing moved
    // --shard needs --run-name: the default one (a time) differs from machine to machine.
    const noName = await roller(['collect', ...collectArgs, '--output', join(tmp.path, 'refused'), '--shard', '0/2']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--shard needs --run-name/);
  }, 5 * 60_000);
});
