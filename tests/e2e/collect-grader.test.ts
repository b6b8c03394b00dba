/**
 * Task graders (bench scores, seeds/003 ATIF extra.roller): the real Claude Code CLI on the scripted model, each
 * task's grader run in the work directory it left. A verdict changes no sample status, exit code or SFT inclusion.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunInfo, SampleInfo } from '../../src/schemas/index.js';
import { collectRuns, filesUnder, roller } from '../support/collect-run.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('collect-grader');
const { collectValidRun } = collectRuns(tmp);
const readJson = <T = Json>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

describe('roller collect with task graders (real Claude Code)', () => {
  it('passed, failed and ungradable verdicts with their scores in info.json, the run summary and ATIF; kept by --resume and reprocess', async () => {
    // Each grader also leaves a file in the work dir: results/ must hold what the agent left, not that.
    const check = 'touch graded.marker; if test -f hello.txt; then echo 1 > "$ROLLER_GRADER_DIR/reward.txt"; else echo 0 > "$ROLLER_GRADER_DIR/reward.txt"; echo "no hello.txt" >&2; exit 1; fi';
    const tasks = [
      { id: 'written', prompt: '[WRITE] Write hi into hello.txt.', output_dirs: ['.'], grader: { command: check } },
      { id: 'not-written', prompt: '[HELLO] Say hello.', grader: { command: check } },
      { id: 'bad-reward', prompt: '[HELLO] Say hello.', grader: { command: `echo '{"reward": "yes"}' > "$ROLLER_GRADER_DIR/reward.json"` } },
      { id: 'ungraded', prompt: '[HELLO] Say hello.' },
    ];
    const run = await collectValidRun('graded', tasks, ['--harness', 'claude-code', '--capture-debug', 'full']);
    const info = readJson<RunInfo>(join(run, 'info.json'));
    const sample = (i: number) => readJson<SampleInfo>(join(run, info.samples[i]!.path, 'info.json'));
    expect(info.samples.map((s) => [s.task_id, s.status, s.grade])).toEqual([
      ['written', 'ok', 'passed'],
      ['not-written', 'ok', 'failed'],
      ['bad-reward', 'ok', 'error'],
      ['ungraded', 'ok', undefined],
    ]);
    expect(info.summary.grades).toEqual({ graded: 3, passed: 1, failed: 1, timeout: 0, error: 1 });
    expect(sample(0).grade).toMatchObject({ status: 'passed', exit_code: 0, scores: { reward: 1 }, reason: null });
    expect(sample(1).grade).toMatchObject({ status: 'failed', exit_code: 1, scores: { reward: 0 }, reason: 'the grader exited 1 (see grader/stderr.log)' });
    expect(readFileSync(join(run, info.samples[1]!.path, 'grader', 'stderr.log'), 'utf8')).toBe('no hello.txt\n');
    expect(sample(2).grade).toMatchObject({ status: 'error', scores: {}, reason: "$ROLLER_GRADER_DIR/reward.json: 'reward' is not a finite number" });
    expect((sample(2).runtime as Json).warnings).toContain("grader: $ROLLER_GRADER_DIR/reward.json: 'reward' is not a finite number");
    expect(sample(3).grade).toBeUndefined();
    expect(existsSync(join(run, info.samples[3]!.path, 'grader'))).toBe(false);
    // results/ is copied before grading; graders never make a sample leave sft.jsonl.
    expect(sample(0).results.map((f) => f.path)).toEqual(['hello.txt']);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);

    const exported = await roller(['export', run]);
    expect(exported.code, exported.stderr).toBe(0);
    const trajectories = filesUnder(join(run, 'atif')).filter((f) => f.endsWith('trajectory.json')).sort();
    expect((await roller(['validate', '--schema', 'atif', ...trajectories])).code).toBe(0);
    expect(trajectories.map((f) => readJson(f).extra.roller.bench_scores)).toEqual([
      { status: 'passed', scores: { reward: 1 } },
      { status: 'failed', scores: { reward: 0 } },
      { status: 'error', scores: {} },
      null,
    ]);

    // A resume reuses every sample with its verdict.
    const again = await roller(['collect', '--capture-calls', '--tasks', join(tmp.path, 'graded.jsonl'), '--harness', 'claude-code', '--output', join(tmp.path, 'runs'), '--run-name', 'graded', '--resume', '--capture-debug', 'full']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('roller collect: graded 3: 1 passed, 1 failed, 0 timed out, 1 could not be graded');
    const resumed = readJson<RunInfo>(join(run, 'info.json'));
    expect(resumed.summary).toMatchObject({ skipped: 4, grades: { graded: 3, passed: 1, failed: 1, timeout: 0, error: 1 } });

    const out = join(tmp.path, 'reprocessed');
    const reprocessed = await roller(['reprocess', run, '--output', out]);
    expect(reprocessed.code, reprocessed.stderr).toBe(0);
    expect(readJson<SampleInfo>(join(out, info.samples[1]!.path, 'info.json')).grade).toEqual(sample(1).grade);
    expect(readFileSync(join(out, info.samples[1]!.path, 'grader', 'stderr.log'), 'utf8')).toBe('no hello.txt\n');
  }, 10 * 60_000);

  it("examples/tasks/graded.jsonl as the README runs it: one passed, one failed, both scores exported", async () => {
    const out = join(tmp.path, 'example-runs');
    const r = await roller(['collect', '--tasks', join(repoRoot, 'examples/tasks/graded.jsonl'), '--harness', 'claude-code', '--model', 'scripted/default', '--output', out, '--run-name', 'graded']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'graded');
    expect(readJson<RunInfo>(join(run, 'info.json')).summary.grades).toEqual({ graded: 2, passed: 1, failed: 1, timeout: 0, error: 0 });
    expect((await roller(['export', run])).code).toBe(0);
    const scores = filesUnder(join(run, 'atif')).filter((f) => f.endsWith('trajectory.json')).sort().map((f) => readJson(f).extra.roller.bench_scores);
    expect(scores).toEqual([{ status: 'passed', scores: { reward: 1 } }, { status: 'failed', scores: { reward: 0 } }]);
  }, 5 * 60_000);
});
