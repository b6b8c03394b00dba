import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, type HarnessLaunch } from '../launch.js';

/** Where `--state-dir` keeps OpenClaw's stores under a HOME laid out by openclawPlan. */
export const openClawStateDir = (home: string) => join(home, '.openclaw', 'state');

/**
 * `openclaw agent exec` (embedded, no Gateway) on the Node 24 runtime installed with it, offline
 * (reference/harnesses/openclaw.md): a provider `roller` (openai-completions) at the recording proxy with
 * the key from the environment, tool search off so every tool is offered, updates/Bonjour/channels/onboarding
 * off, and a state dir that is kept (without one exec deletes its store at exit).
 */
export async function openclawPlan(launch: HarnessLaunch & { runtime: string; model?: string }): Promise<ProcessPlan> {
  const state = openClawStateDir(launch.home);
  await mkdir(state, { recursive: true });
  const model = launch.model ?? 'scripted-model';
  const config = join(launch.home, '.openclaw', 'openclaw.json');
  await writeFile(
    config,
    JSON.stringify(
      {
        update: { checkOnStart: false },
        models: {
          mode: 'replace',
          providers: {
            roller: {
              baseUrl: `${launch.baseUrl}/v1`,
              apiKey: '${ROLLER_PROVIDER_KEY}', // read from the environment by OpenClaw, never written here
              api: 'openai-completions',
              models: [{ id: model, name: model, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }],
            },
          },
        },
        tools: { toolSearch: false },
        agents: { defaults: { model: { primary: `roller/${model}` } } },
      },
      null,
      2,
    ),
  );
  return {
    command: launch.runtime,
    args: [launch.bin, 'agent', 'exec', '--config', config, '--state-dir', state, '--cwd', launch.work, '--model', `roller/${model}`, '--json', '--timeout', '600', ...(launch.extraArgs ?? []), launch.prompt],
    cwd: launch.work,
    env: {
      ...isolatedHomeEnv(launch.home, join(launch.runtime, '..')),
      ROLLER_PROVIDER_KEY: launch.apiKey,
      OPENCLAW_NO_AUTO_UPDATE: '1',
      OPENCLAW_DISABLE_BONJOUR: '1',
      OPENCLAW_SKIP_CHANNELS: '1',
      OPENCLAW_NO_ONBOARD: '1',
      OPENCLAW_SKIP_ONBOARDING: '1',
      OPENCLAW_NO_RESPAWN: '1',
    },
  };
}
