/**
 * `roller verify` as a user runs it: the pinned real CLI, the common acceptance scenarios, offline. Every
 * runnable scenario must pass; the others must say not_run / not_applicable with a reason (never pass).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { verifyOf } from '../../src/harnesses/index.js';
import { rollerBin } from '../support/paths.js';

describe('roller verify (real CLIs, offline)', () => {
  // OpenClaw runs each scenario through its Gateway and waits for its sub-agents to settle: about 80 s a scenario.
  it.each(['claude-code', 'codex', 'opencode', 'pi', 'openclaw', 'deepseek', 'hermes'] as const)('%s: every applicable scenario passes', async (harness) => {
    const { scenarios } = verifyOf(harness);
    // verify exits 1 while a scenario is not run: the harness is not fully verified (its reason is printed).
    const notRun = scenarios.some((s) => s.skip?.status === 'not_run');
    const { stdout, stderr, code } = await promisify(execFile)(rollerBin, ['verify', '--harness', harness], { timeout: 25 * 60_000 }).then(
      (r) => ({ ...r, code: 0 }),
      (err: { stdout: string; stderr: string; code: number }) => ({ stdout: err.stdout, stderr: err.stderr, code: err.code }),
    );
    // The scenario lines (with a failure's reason) go with the exit code: a failure in CI says which and why.
    expect(code, `${stdout}\n${stderr}`).toBe(notRun ? 1 : 0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(scenarios.length);
    for (const s of scenarios) {
      const line = lines.find((l) => l.slice(15).startsWith(s.name));
      expect(line, s.name).toBeDefined();
      expect(line!.split(' ')[0], line).toBe(s.skip ? s.skip.status : 'pass');
      if (s.skip) expect(line).toContain(s.skip.reason);
    }
    const runnable = scenarios.filter((s) => !s.skip).length;
    expect(stderr).toContain(`${runnable} passed, 0 failed`);
    if (notRun) expect(stderr).toMatch(/[1-9]\d* not run/);
  }, 25 * 60_000);
});
