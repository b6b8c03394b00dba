/** OpenClaw launch plans: what a Gateway attempt runs and writes (the real CLI runs them in tests/e2e). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openclawPlan } from '../../../src/harnesses/openclaw/launch.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('openclaw-launch');
const launch = (name: string) => ({ bin: '/opt/openclaw/openclaw.mjs', runtime: '/opt/node24/bin/node', prompt: 'do it', home: join(tmp.path, name, 'home'), work: join(tmp.path, name, 'work'), baseUrl: 'http://127.0.0.1:4000', apiKey: 'sk-test-dummy' });

describe('openclaw launch plans', () => {
  it('gateway: the launcher and its spec live in the attempt HOME (a container mounts it), the token only in the environment', async () => {
    const l = launch('gw');
    const plan = await openclawPlan({ ...l, timeoutS: 120 });
    expect(plan.command).toBe(l.runtime);
    const [script, specPath] = plan.args;
    expect(script!.startsWith(l.home) && existsSync(script!)).toBe(true);
    const spec = JSON.parse(readFileSync(specPath!, 'utf8')) as { bin: string; port: number; agentArgs: string[]; settleTimeoutMs: number };
    // The prompt from a file in the attempt HOME: argv would cap it at 128 KB.
    expect(spec.agentArgs).toEqual(['--agent', 'main', '--model', 'roller/scripted-model', '--json', '--timeout', '120', '--message-file', join(l.home, '.roller-prompt.txt')]);
    expect(readFileSync(join(l.home, '.roller-prompt.txt'), 'utf8')).toBe('do it');
    expect(spec.settleTimeoutMs).toBe(120_000);
    const token = plan.env.OPENCLAW_GATEWAY_TOKEN!;
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    const config = readFileSync(join(l.home, '.openclaw', 'openclaw.json'), 'utf8');
    expect(JSON.parse(config)).toMatchObject({ gateway: { mode: 'local', bind: 'loopback', port: spec.port, auth: { mode: 'token', token: '${OPENCLAW_GATEWAY_TOKEN}' } } });
    for (const text of [config, readFileSync(specPath!, 'utf8')]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain('sk-test-dummy');
    }
  });

  it('two attempts get two tokens', async () => {
    const a = await openclawPlan(launch('a'));
    const b = await openclawPlan(launch('b'));
    expect(a.env.OPENCLAW_GATEWAY_TOKEN).not.toBe(b.env.OPENCLAW_GATEWAY_TOKEN);
  });

  it('exec: one embedded turn, no Gateway in the config', async () => {
    const l = launch('exec');
    const plan = await openclawPlan({ ...l, mode: 'exec' });
    expect(plan.args.slice(0, 3)).toEqual([l.bin, 'agent', 'exec']);
    expect(JSON.parse(readFileSync(join(l.home, '.openclaw', 'openclaw.json'), 'utf8')).gateway).toBeUndefined();
    expect(plan.env.OPENCLAW_GATEWAY_TOKEN).toBeUndefined();
  });

  it('a second agent: its own entry with its tool policy, main allowed to spawn it; without one, no roster at all', async () => {
    const l = launch('agents');
    await openclawPlan({ ...l, agents: [{ id: 'reader', description: 'Reads only.', tools: { deny: ['exec', 'write'] } }] });
    const agents = (JSON.parse(readFileSync(join(l.home, '.openclaw', 'openclaw.json'), 'utf8')) as { agents: Record<string, unknown> }).agents;
    expect(agents.entries).toEqual({ main: { default: true, subagents: { allowAgents: ['reader'] } }, reader: { description: 'Reads only.', tools: { deny: ['exec', 'write'] } } });
    const one = launch('one');
    await openclawPlan(one);
    expect((JSON.parse(readFileSync(join(one.home, '.openclaw', 'openclaw.json'), 'utf8')) as { agents: Record<string, unknown> }).agents.entries).toBeUndefined();
  });
});
