import { mkdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, type HarnessLaunch } from '../launch.js';

/** Where dsh keeps its session logs under a HOME: sessions/<cwd with / as ->/<session id>/session.jsonl.zstd. */
export const dshSessionsDir = (home: string) => join(home, '.dsh', 'sessions');

/** The most bytes of a task dsh's headless profile takes: it reads the task from argv, where one argument holds 128 KiB. */
export const DSH_MAX_PROMPT_BYTES = 128 * 1024 - 1;

/**
 * `dsh --profile headless "<task>"` offline on its Node 24 runtime (docs/harness-notes/deepseek.md): a fresh HOME
 * (its profile, sessions and anonymous id live under it), temporary files inside it, the DeepSeek provider at the
 * recording proxy (DEEPSEEK_BASE_URL is the base without /v1), and every action allowed without asking — a headless
 * run has no one to ask. It answers one task, prints the final assistant text and exits.
 */
export async function deepSeekPlan(launch: HarnessLaunch & { runtime: string }): Promise<ProcessPlan> {
  if (Buffer.byteLength(launch.prompt) > DSH_MAX_PROMPT_BYTES) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the prompt is ${Buffer.byteLength(launch.prompt)} bytes: dsh's headless profile takes the task as one argument, at most ${DSH_MAX_PROMPT_BYTES} bytes`);
  }
  const tmp = join(launch.home, 'tmp');
  await mkdir(tmp, { recursive: true });
  return {
    command: launch.runtime,
    // The CLI's own script, run by the runtime (its #!/usr/bin/env node would find roller's Node 20 otherwise).
    args: [await realpath(launch.bin), '--profile', 'headless', ...(launch.extraArgs ?? []), launch.prompt],
    cwd: launch.work,
    env: {
      ...isolatedHomeEnv(launch.home, dirname(launch.runtime)),
      TMPDIR: tmp,
      DEEPSEEK_BASE_URL: launch.baseUrl.replace(/\/+$/, ''),
      DEEPSEEK_API_KEY: launch.apiKey,
      DSH_PERMISSION_MODE: 'danger-full-access',
    },
  };
}
