import { join } from 'node:path';
import { mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, SCRIPTED_MODEL_ID, sdkBaseUrl, type HarnessLaunch } from '../launch.js';

/** Where Hermes keeps its state (state.db, logs, config.yaml) under a HOME. */
export const hermesHome = (home: string) => join(home, '.hermes');

/** Hermes takes the one-shot prompt as one argument (`-z PROMPT`): at most 128 KiB less its terminator. */
export const HERMES_MAX_PROMPT_BYTES = 128 * 1024 - 1;

const IDENTITY_PLUGIN = 'roller-identity';

/**
 * roller's Hermes plugin: an llm_request middleware adding `x-roller-session-id: <the agent's session id>` to each
 * model request (the OpenAI SDK's extra_headers). roller's proxy keeps the value as the call's identity and removes
 * the header before forwarding, as it does Pi's; a delegate_task child is an agent with a session of its own.
 */
const IDENTITY_PLUGIN_CODE = `# roller: the agent's session id on each model request (roller's proxy removes it before forwarding).


def _name_session(request=None, session_id="", **_):
    if not isinstance(request, dict) or not session_id:
        return None
    headers = dict(request.get("extra_headers") or {})
    headers["x-roller-session-id"] = session_id
    return {"request": {**request, "extra_headers": headers}}


def register(ctx):
    ctx.register_middleware("llm_request", _name_session)
`;

/**
 * `hermes -z PROMPT --yolo` offline (docs/harness-notes/hermes.md): a fresh HOME whose `.hermes/config.yaml` names one
 * provider, `custom` (OpenAI-compatible Chat Completions), at the recording proxy with the attempt's stand-in key; the
 * one-shot mode prints only the final answer and answers no approval (none is asked: --yolo, as a headless run has no
 * one to ask). Its delegate_task children run in the same process, synchronously in one-shot mode.
 */
export async function hermesPlan(launch: HarnessLaunch & { maxSpawnDepth?: number }): Promise<ProcessPlan> {
  if (Buffer.byteLength(launch.prompt) > HERMES_MAX_PROMPT_BYTES) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the prompt is ${Buffer.byteLength(launch.prompt)} bytes: Hermes's one-shot mode takes it as one argument, at most ${HERMES_MAX_PROMPT_BYTES} bytes`);
  }
  const dir = hermesHome(launch.home);
  await mkdirInside(launch.home, dir);
  const config = [
    '# roller: one provider, the recording proxy (src/harnesses/hermes/launch.ts)',
    'model:',
    '  provider: custom',
    `  base_url: ${JSON.stringify(sdkBaseUrl(launch.baseUrl, 'openai-chat-completions'))}`,
    `  default: ${JSON.stringify(launch.model ?? SCRIPTED_MODEL_ID)}`,
    `  api_key: ${JSON.stringify(launch.apiKey)}`,
    ...(launch.recorded === false ? [] : ['plugins:', `  enabled: [${IDENTITY_PLUGIN}]`]),
    // Nested delegation (a child that delegates again) only where asked: Hermes's default is one level.
    ...(launch.maxSpawnDepth ? ['delegation:', `  max_spawn_depth: ${launch.maxSpawnDepth}`] : []),
    '',
  ].join('\n');
  await writeFileInside(launch.home, join(dir, 'config.yaml'), config, 0o600);
  if (launch.recorded !== false) {
    const plugin = join(dir, 'plugins', IDENTITY_PLUGIN);
    await mkdirInside(launch.home, plugin);
    await writeFileInside(launch.home, join(plugin, 'plugin.yaml'), `name: ${IDENTITY_PLUGIN}\nversion: 1.0.0\ndescription: "roller: names each agent's session on its model requests"\n`, 0o600);
    await writeFileInside(launch.home, join(plugin, '__init__.py'), IDENTITY_PLUGIN_CODE, 0o600);
  }
  return {
    command: launch.bin,
    args: ['-z', launch.prompt, '--yolo', ...(launch.extraArgs ?? [])],
    cwd: launch.work,
    env: { ...isolatedHomeEnv(launch.home), TMPDIR: launch.home, PYTHONDONTWRITEBYTECODE: '1' },
  };
}
