/**
 * gateway-session.js, the one process an OpenClaw Gateway run is, on real processes: a stand-in CLI
 * (tests/fixtures/openclaw/fake-cli/openclaw.mjs) plays gateway / agent / tasks list. The real CLI runs the
 * same launcher in tests/e2e/collect.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatewaySessionSpec } from '../../src/harnesses/openclaw/gateway-session.js';
import { openClawCaptureFailure } from '../../src/harnesses/openclaw/drain.js';
import { openClawDrainReportFile } from '../../src/harnesses/openclaw/launch.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

// The compiled launcher (npm test builds first), run on this Node as OpenClaw's runtime would run it.
const launcher = join(repoRoot, 'dist/src/harnesses/openclaw/gateway-session.js');
const fakeCli = join(repoRoot, 'tests/fixtures/openclaw/fake-cli/openclaw.mjs');
const tmp = useTempDir('openclaw-gateway-session');
let n = 0;

async function session(mode: string, spec: Partial<GatewaySessionSpec> = {}): Promise<{ code: number | null; stdout: string; stderr: string; events: string[]; dir: string; report: unknown }> {
  const dir = join(tmp.path, `s${++n}`);
  mkdirSync(dir);
  const full: GatewaySessionSpec = { bin: fakeCli, port: 45678, agentArgs: ['--agent', 'main', '--json', '--message', 'hello'], readyTimeoutMs: 10_000, settleTimeoutMs: 20_000, pollMs: 20, idlePollMs: 20, reportPath: openClawDrainReportFile(dir), ...spec };
  writeFileSync(join(dir, 'spec.json'), JSON.stringify(full));
  const child = spawn(process.execPath, [launcher, join(dir, 'spec.json')], { env: { ...process.env, FAKE_DIR: dir, FAKE_MODE: mode }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const events = readFileSync(join(dir, 'events.log'), 'utf8').trim().split('\n');
  const report = existsSync(full.reportPath!) ? (JSON.parse(readFileSync(full.reportPath!, 'utf8')) as unknown) : null;
  return { code, stdout, stderr, events, dir, report };
}

describe('OpenClaw gateway-session launcher', () => {
  it('starts the Gateway, waits for ready (through color codes), runs the agent, waits until sub-agents settled twice in a row, stops the Gateway', async () => {
    const r = await session('normal');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ runId: 'run-1', status: 'ok' });
    // Poll 1: running; poll 2: ended but its completion still pending; polls 3 and 4: settled.
    expect(r.events).toEqual(['gateway --port 45678 --auth token', 'agent --agent main --json --message hello', 'tasks 1', 'tasks 2', 'tasks 3', 'tasks 4', 'gateway stopped']);
    expect(r.stderr).toContain('roller gateway-session: 1 sub-agent task(s) settled: agent:main:subagent:1 succeeded/delivered');
  }, 30_000);

  it('while sub-agents run, the task list is read again when the Gateway logs a run’s end, not on a timer', async () => {
    // The fallback timer is far beyond the test's time: only the logged run ends can drive the four looks.
    const r = await session('run-ends', { idlePollMs: 600_000, pollMs: 600_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.events.filter((e) => e.startsWith('tasks'))).toEqual(['tasks 1', 'tasks 2', 'tasks 3', 'tasks 4']);
  }, 30_000);

  it('a Gateway that exits before it is ready: exit 70, said on stderr, no agent run', async () => {
    const r = await session('gateway-dies');
    expect(r.code).toBe(70);
    expect(r.stderr).toContain('config invalid');
    expect(r.stderr).toMatch(/roller gateway-session: the Gateway exited \(1\) before it was ready/);
    expect(r.events.some((e) => e.startsWith('agent'))).toBe(false);
  }, 30_000);

  it('a failed agent run: its exit code, no wait for sub-agents, the Gateway stopped', async () => {
    const r = await session('agent-fails');
    expect(r.code).toBe(3);
    expect(r.events.some((e) => e.startsWith('tasks'))).toBe(false);
    expect(r.events.at(-1)).toBe('gateway stopped');
  }, 30_000);

  it('sub-agents that never settle: exit 71 after the settle time, naming them, the Gateway stopped, the drain reported', async () => {
    const r = await session('never-settles', { settleTimeoutMs: 1500 });
    expect(r.code).toBe(71);
    expect(r.stderr).toContain('sub-agents still running after 1.5 s: agent:main:subagent:1 running/pending');
    expect(r.events.at(-1)).toBe('gateway stopped');
    expect(r.report).toEqual({ settled: false, registry: 'read', pending: [{ childSessionKey: 'agent:main:subagent:1', status: 'running', deliveryStatus: 'pending' }], message: expect.stringContaining('still running after 1.5 s') });
    // Recorded as a capture error that keeps the turn: a child still running is `running`.
    expect((await openClawCaptureFailure(r.dir, 71))?.children).toEqual([{ native_id: 'agent:main:subagent:1', native_status: 'running', delivery_status: 'pending', recorded: 'running' }]);
    expect(await openClawCaptureFailure(r.dir, 3)).toBeNull();
  }, 30_000);

  it('the wait ends within the launcher\'s budget, before the sample\'s own timeout', async () => {
    const r = await session('never-settles', { settleTimeoutMs: 600_000, budgetMs: 2500 });
    expect(r.code).toBe(71);
    expect(r.stderr).toContain('sub-agents still running after 3 s into the run');
  }, 30_000);

  it('a child that ended with its completion still pending is partial; a registry that never answers is unknown', async () => {
    const ended = await session('ended-undelivered', { settleTimeoutMs: 1500 });
    expect(ended.code).toBe(71);
    expect((await openClawCaptureFailure(ended.dir, 71))?.children).toEqual([{ native_id: 'agent:main:subagent:1', native_status: 'succeeded', delivery_status: 'pending', recorded: 'partial' }]);
    const blind = await session('no-registry', { settleTimeoutMs: 1500 });
    expect(blind.code).toBe(71);
    expect(blind.report).toMatchObject({ settled: false, registry: 'unreadable', pending: [] });
    const failure = await openClawCaptureFailure(blind.dir, 71);
    expect(failure).toMatchObject({ code: 'ROLLER_DRAIN_INCOMPLETE', children: [{ native_id: null, recorded: 'unknown' }] });
    expect(failure?.message).toContain('the sub-agent task list could not be read');
  }, 30_000);
});
