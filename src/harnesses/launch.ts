import { writeFileInside } from '../core/inside-root.js';
import { join } from 'node:path';
import type { ApiProtocol } from '../schemas/api-protocol.js';

/**
 * The environment of a harness that keeps everything under one fresh HOME: nothing inherited but PATH
 * (a runtime's bin dir first when given), the XDG dirs inside HOME.
 */
export function isolatedHomeEnv(home: string, pathFirst?: string): Record<string, string> {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  return {
    PATH: pathFirst ? `${pathFirst}:${path}` : path,
    LANG: 'C.UTF-8',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
}

/** What every harness launch plan needs, whatever the harness. */
export interface HarnessLaunch {
  /** The installed CLI (`roller harness install <name>`). */
  bin: string;
  prompt: string;
  /** A fresh directory per attempt: the harness's HOME and config/state dirs live under it. */
  home: string;
  /** The task's work directory. */
  work: string;
  /** The recording proxy, as the model API's base URL (with --wire-trace off: the model API's own). */
  baseUrl: string;
  /** false: no recording proxy stands between the CLI and the model API (--wire-trace off), so the CLI sends nothing roller-specific. */
  recorded?: boolean;
  /** Handed to the CLI; forwarded by the proxy, never written. */
  apiKey: string;
  /** The model id the CLI asks its provider for (absent: the scripted model's name in roller's provider config). */
  model?: string;
  /** The protocol its provider configuration speaks (absent: the harness's own). */
  protocol?: ApiProtocol;
  extraArgs?: string[];
}

/** The model id roller's provider configuration names when the run names none (the embedded scripted model answers any). */
export const SCRIPTED_MODEL_ID = 'scripted-model';

/** The fields of a run's launch every harness's plan takes as they are (a plan adds its own after). */
export const launchFields = (l: HarnessLaunch): HarnessLaunch => ({
  bin: l.bin,
  prompt: l.prompt,
  home: l.home,
  work: l.work,
  baseUrl: l.baseUrl,
  ...(l.recorded === false ? { recorded: false } : {}),
  apiKey: l.apiKey,
  ...(l.model ? { model: l.model } : {}),
  ...(l.protocol ? { protocol: l.protocol } : {}),
  ...(l.extraArgs ? { extraArgs: l.extraArgs } : {}),
});

/**
 * The prompt as a file in the attempt's HOME, for the CLI to read on stdin or from a file: argv holds at most 128 KB
 * per argument (E2BIG), prompts may be megabytes. One file per launch (a follow-up writes its own).
 */
export async function promptFile(launch: HarnessLaunch, name = 'prompt'): Promise<string> {
  const path = join(launch.home, `.roller-${name}.txt`);
  await writeFileInside(launch.home, path, launch.prompt, 0o600);
  return path;
}

/**
 * The base URL a provider SDK is given for roller's proxy: OpenAI's SDKs, and the AI SDK's providers of every protocol,
 * take a base ending in /v1 and append the endpoint (`/chat/completions`, `/responses`, `/messages`); Anthropic's own SDK
 * takes the bare base and appends `/v1/messages`.
 */
export function sdkBaseUrl(baseUrl: string, protocol: ApiProtocol | undefined, sdk: 'vendor' | 'ai-sdk' = 'vendor'): string {
  const base = baseUrl.replace(/\/+$/, '');
  return protocol === 'anthropic-messages' && sdk === 'vendor' ? base : `${base}/v1`;
}

/** pi-ai's `api` names (Pi's models.json, OpenClaw's models.providers) of the protocols roller records. */
export const PI_AI_API: Readonly<Record<ApiProtocol, string>> = {
  'openai-chat-completions': 'openai-completions',
  'anthropic-messages': 'anthropic-messages',
  'openai-responses': 'openai-responses',
};
