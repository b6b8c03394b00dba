import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, promptFile, type HarnessLaunch } from '../launch.js';

/** Where OpenCode keeps its database under a HOME laid out by opencodePlan (XDG dirs inside it). */
export const openCodeDataDir = (home: string) => join(home, '.local', 'share', 'opencode');

/**
 * `opencode run --format json` headless and offline (reference/harnesses/opencode.md): XDG dirs inside a fresh
 * HOME, a provider `roller` (openai-compatible) pointing at the recording proxy for both the model and the
 * small (title) model, auto-update, share, models.dev and LSP downloads off — and an npm registry that does
 * not answer, so its background plugin install cannot reach the network.
 */
export async function opencodePlan(launch: HarnessLaunch & { model?: string }): Promise<ProcessPlan> {
  const config = join(launch.home, '.config', 'opencode');
  await mkdir(config, { recursive: true });
  for (const d of ['.local/share', '.local/state', '.cache']) await mkdir(join(launch.home, d), { recursive: true });
  const model = launch.model ?? 'scripted-model';
  await writeFile(
    join(config, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        model: `roller/${model}`,
        small_model: `roller/${model}`,
        permission: { edit: 'allow', bash: 'allow', webfetch: 'deny', external_directory: 'allow' },
        provider: {
          roller: {
            npm: '@ai-sdk/openai-compatible',
            name: 'roller',
            options: { baseURL: `${launch.baseUrl}/v1`, apiKey: '{env:ROLLER_PROVIDER_KEY}' },
            models: { [model]: { name: model, tool_call: true, limit: { context: 128000, output: 4096 } } },
          },
        },
      },
      null,
      2,
    ),
  );
  const nowhere = 'http://127.0.0.1:9';
  return {
    command: launch.bin,
    // The prompt on stdin: argv would cap it at 128 KB, and a positional prompt is stored wrapped in quotes.
    args: ['run', '--format', 'json', ...(launch.extraArgs ?? [])],
    cwd: launch.work,
    stdin: await promptFile(launch),
    env: {
      ...isolatedHomeEnv(launch.home),
      XDG_STATE_HOME: join(launch.home, '.local', 'state'),
      ROLLER_PROVIDER_KEY: launch.apiKey,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      OPENCODE_DISABLE_TERMINAL_TITLE: '1',
      // Its background `npm install` of a plugin must not reach the registry (CI is offline).
      npm_config_registry: nowhere,
      HTTPS_PROXY: nowhere,
      HTTP_PROXY: nowhere,
      NO_PROXY: '127.0.0.1,localhost',
    },
  };
}
