import { join } from 'node:path';
import { mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, SCRIPTED_MODEL_ID, sdkBaseUrl, type HarnessLaunch } from '../launch.js';

/** Where Hermes keeps its state (state.db, logs, config.yaml) under a HOME. */
export const hermesHome = (home: string) => join(home, '.hermes');

/** Hermes takes the one-shot prompt as one argument (`-z PROMPT`): at most 128 KiB less its terminator. */
export const HERMES_MAX_PROMPT_BYTES = 128 * 1024 - 1;

/**
 * `hermes -z PROMPT --yolo` offline (docs/harness-notes/hermes.md): a fresh HOME whose `.hermes/config.yaml` names one
 * provider, `custom` (OpenAI-compatible Chat Completions), at the recording proxy with the attempt's stand-in key; the
 * one-shot mode prints only the final answer and answers no approval (none is asked: --yolo, as a headless run has no
 * one to ask). Its delegate_task children run in the same process, synchronously in one-shot mode.
 */
export async function hermesPlan(launch: HarnessLaunch): Promise<ProcessPlan> {
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
    '',
  ].join('\n');
  await writeFileInside(launch.home, join(dir, 'config.yaml'), config, 0o600);
  return {
    command: launch.bin,
    args: ['-z', launch.prompt, '--yolo', ...(launch.extraArgs ?? [])],
    cwd: launch.work,
    env: { ...isolatedHomeEnv(launch.home), TMPDIR: launch.home, PYTHONDONTWRITEBYTECODE: '1' },
  };
}
