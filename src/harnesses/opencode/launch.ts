import { mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { join } from 'node:path';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, promptFile, SCRIPTED_MODEL_ID, sdkBaseUrl, type HarnessLaunch } from '../launch.js';
import type { ApiProtocol } from '../../schemas/api-protocol.js';
import { releasedSince } from '../release.js';

/**
 * Releases 1.1.27 up to 1.1.53 fetch models.dev at start-up whatever OPENCODE_DISABLE_MODELS_FETCH says, and fail
 * offline, unless a model list is cached — which their first start wipes along with the rest of a cache it did not set
 * up. So for them the CLI is started once with --version (setting its cache up) and an empty list written before the run.
 */
const MODELS_FETCH_REGRESSION = { from: '1.1.27', until: '1.1.53' };

/** The AI SDK provider package OpenCode bundles for each protocol (it installs no other offline). */
const OPENCODE_PROVIDER_PACKAGE: Readonly<Record<ApiProtocol, string>> = {
  'openai-chat-completions': '@ai-sdk/openai-compatible',
  'anthropic-messages': '@ai-sdk/anthropic',
  'openai-responses': '@ai-sdk/openai',
};

/**
 * --thinking as an OpenCode model variant (`--variant`): the AI SDK provider options that set the level in each
 * protocol — Chat's `reasoning_effort`, Responses' `reasoning.effort`, Anthropic's `output_config.effort`.
 */
function variantOptions(protocol: ApiProtocol, level: string): Record<string, unknown> {
  if (protocol === 'anthropic-messages') return { effort: level };
  return protocol === 'openai-responses' ? { reasoningEffort: level, reasoningSummary: 'auto' } : { reasoningEffort: level };
}

/** The config key of the title requests' model under --thinking: the same API model id, no reasoning declared. */
const TITLE_MODEL_KEY = 'roller-title';

/** Where OpenCode keeps its database under a HOME laid out by opencodePlan (XDG dirs inside it). */
export const openCodeDataDir = (home: string) => join(home, '.local', 'share', 'opencode');

/**
 * `opencode run --format json` headless and offline (reference/harnesses/opencode.md): XDG dirs inside a fresh
 * HOME, a provider `roller` (openai-compatible) pointing at the recording proxy for both the model and the
 * small (title) model, auto-update, share, models.dev and LSP downloads off — and an npm registry that does
 * not answer, so its background plugin install cannot reach the network.
 */
export async function opencodePlan(launch: HarnessLaunch & { thinking?: string; version?: string; captureCalls?: boolean }): Promise<ProcessPlan> {
  const config = join(launch.home, '.config', 'opencode');
  await mkdirInside(launch.home, config);
  for (const d of ['.local/share', '.local/state', '.cache']) await mkdirInside(launch.home, join(launch.home, d));
  const model = launch.model ?? SCRIPTED_MODEL_ID;
  const protocol = launch.protocol ?? 'openai-chat-completions';
  // The model and its provider, also given as OPENCODE_CONFIG_CONTENT below: it outranks every config file (a
  // project's opencode.json included), so nothing in the work dir or HOME can move the model calls.
  const connection = {
    model: `roller/${model}`,
    // With --thinking the title requests get the same model without the variant (OpenCode asks its small model for
    // effort 'low' otherwise): what the audit checks is the agent's effort.
    small_model: launch.thinking ? `roller/${TITLE_MODEL_KEY}` : `roller/${model}`,
    provider: {
      roller: {
        npm: OPENCODE_PROVIDER_PACKAGE[protocol],
        name: 'roller',
        options: { baseURL: sdkBaseUrl(launch.baseUrl, protocol, 'ai-sdk'), apiKey: '{env:ROLLER_PROVIDER_KEY}' },
        models: {
          [model]: { name: model, tool_call: true, limit: { context: 128000, output: 4096 }, ...(launch.thinking ? { reasoning: true, variants: { [launch.thinking]: variantOptions(protocol, launch.thinking) } } : {}) },
          ...(launch.thinking ? { [TITLE_MODEL_KEY]: { id: model, name: model, tool_call: true, limit: { context: 128000, output: 4096 }, options: variantOptions(protocol, launch.thinking) } } : {}),
        },
      },
    },
  };
  await writeFileInside(launch.home, join(config, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        ...connection,
        permission: { edit: 'allow', bash: 'allow', webfetch: 'deny', external_directory: 'allow' },
        // seeds/000: the native `task` sub-agent tool only when calls are captured (the tools switch every release reads).
        ...(launch.captureCalls ? {} : { tools: { task: false } }),
      },
      null,
      2,
    ),
  );
  const nowhere = 'http://127.0.0.1:9';
  // The prompt on stdin: argv would cap it at 128 KB, and a positional prompt is stored wrapped in quotes.
  const args = ['run', '--format', 'json', ...(launch.thinking ? ['--variant', launch.thinking] : []), ...(launch.extraArgs ?? [])];
  const seedModels = launch.version !== undefined && releasedSince(launch.version, MODELS_FETCH_REGRESSION.from) && !releasedSince(launch.version, MODELS_FETCH_REGRESSION.until);
  if (seedModels) await mkdirInside(launch.home, join(launch.home, '.cache', 'opencode'));
  return {
    ...(seedModels
      ? // (the roller provider names its models in the config: an empty list is all the CLI needs)
        { command: '/bin/sh', args: ['-c', `"$0" --version >/dev/null 2>&1; printf '{}' > "$1"; shift; exec "$0" "$@"`, launch.bin, join(launch.home, '.cache', 'opencode', 'models.json'), ...args] }
      : { command: launch.bin, args }),
    cwd: launch.work,
    stdin: await promptFile(launch),
    env: {
      ...isolatedHomeEnv(launch.home),
      XDG_STATE_HOME: join(launch.home, '.local', 'state'),
      ROLLER_PROVIDER_KEY: launch.apiKey,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(connection),
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
