/** The task grader (bench scores): real shell processes in a real work directory. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGrader } from '../../src/pipelines/collect/grader.js';
import { runProcess } from '../../src/sources/process-runner.js';
import { checkValue, Grade } from '../../src/schemas/index.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('grader');

async function grade(name: string, command: string, setup?: (work: string) => void, timeout_s?: number) {
  const base = join(tmp.path, name);
  const work = join(base, 'work');
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'answer.txt'), '42\n');
  setup?.(work);
  const g = await runGrader({ command, ...(timeout_s ? { timeout_s } : {}) }, { work, home: join(base, 'home'), sampleDir: join(base, 'sample'), defaultTimeoutS: 30, run: runProcess });
  expect(checkValue(Grade, g)).toEqual([]);
  return { g, sample: join(base, 'sample') };
}

describe('task grader', () => {
  it('exit 0 passes; reward.txt is the score `reward`; it runs in the work directory and its output is kept', async () => {
    const { g, sample } = await grade('pass', 'grep -q 42 answer.txt && echo checked && echo 1 > "$ROLLER_GRADER_DIR/reward.txt"');
    expect(g).toMatchObject({ status: 'passed', exit_code: 0, scores: { reward: 1 }, reason: null });
    expect(readFileSync(join(sample, 'grader', 'stdout.log'), 'utf8')).toBe('checked\n');
  });

  it('another exit code fails, with reward.json scores as written', async () => {
    const { g } = await grade('fail', `echo '{"reward": 0.25, "tests_passed": 1, "tests_total": 4}' > "$ROLLER_GRADER_DIR/reward.json"; echo '2 tests failed' >&2; exit 3`);
    expect(g).toMatchObject({ status: 'failed', exit_code: 3, scores: { reward: 0.25, tests_passed: 1, tests_total: 4 }, reason: 'the grader exited 3 (see grader/stderr.log)' });
  });

  it('no reward file: a verdict without scores', async () => {
    expect((await grade('bare', 'test -f answer.txt')).g).toMatchObject({ status: 'passed', scores: {} });
  });

  it('a reward file that says something else is an error naming it; a link is not followed', async () => {
    expect((await grade('text', 'echo "all good" > "$ROLLER_GRADER_DIR/reward.txt"')).g).toMatchObject({ status: 'error', scores: {}, reason: "$ROLLER_GRADER_DIR/reward.txt holds 'all good', not a number" });
    expect((await grade('array', `echo '[1]' > "$ROLLER_GRADER_DIR/reward.json"`)).g.reason).toBe('$ROLLER_GRADER_DIR/reward.json holds an array, not an object of numbers');
    expect((await grade('nan', `echo '{"reward": "high", "n": 1}' > "$ROLLER_GRADER_DIR/reward.json"`)).g.reason).toBe("$ROLLER_GRADER_DIR/reward.json: 'reward' is not a finite number");
    const secret = join(tmp.path, 'outside-secret.json');
    writeFileSync(secret, '{"reward": 1}');
    expect((await grade('link', `ln -s ${secret} "$ROLLER_GRADER_DIR/reward.json"`)).g).toMatchObject({ status: 'error', reason: '$ROLLER_GRADER_DIR/reward.json cannot be read (a symbolic link, not followed)' });
  });

  it('a grader past its time is stopped (its whole process group) and says so', async () => {
    const { g } = await grade('slow', 'sleep 30 & sleep 30', undefined, 1);
    expect(g).toMatchObject({ status: 'timeout', exit_code: null, reason: 'the grader ran past 1 s and was stopped' });
  }, 25_000); // a group left running would hold it 30 s: the test's own time is the check (no timing assertion)

  it('gets no credential of roller\'s environment: only PATH, LANG, its HOME and the ROLLER_ grader paths', async () => {
    process.env.ROLLER_TEST_SECRET_KEY = 'sk-grader-must-not-see';
    try {
      const { sample } = await grade('env', 'env | sort | cut -d= -f1');
      expect(readFileSync(join(sample, 'grader', 'stdout.log'), 'utf8').trim().split('\n').filter((k) => !['PWD', 'SHLVL', '_'].includes(k))).toEqual(['HOME', 'LANG', 'PATH', 'ROLLER_GRADER_DIR', 'ROLLER_WORK_DIR', 'XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME']);
    } finally {
      delete process.env.ROLLER_TEST_SECRET_KEY;
    }
  });
});
