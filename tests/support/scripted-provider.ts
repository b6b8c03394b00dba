import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from 'vitest';
import { rollerBin } from './paths.js';

/**
 * What each harness asks the embedded model for: roller's provider configs name `scripted-model`; Claude Code 2.1.332
 * and dsh 0.1.0-rc.8 ask for their own defaults. Served under these names, an API run's requests (so its tokens, system
 * prompts and prices) equal the embedded run's.
 */
export const DEFAULT_MODEL_OF: Readonly<Record<string, string>> = { 'claude-code': 'claude-opus-5-5', deepseek: 'deepseek-v4-flash' };
export const SERVED_MODEL = 'scripted-model';

/**
 * `roller scripted-model` served as a provider's API for a test file: on its own port, asking for a key that only the
 * environment given to roller holds, serving the harnesses' model names. `api/<harness>` in `models` is each harness's
 * API model in its own protocol.
 */
export function useScriptedProvider(tmp: { readonly path: string }): { readonly env: NodeJS.ProcessEnv; readonly models: string; readonly key: string; readonly url: string } {
  const key = `sk-e2e-${Date.now().toString(36)}-provider-${Math.random().toString(36).slice(2)}`;
  const state = { child: undefined as ChildProcess | undefined, url: '', models: '' };
  beforeAll(async () => {
    const names = [SERVED_MODEL, ...Object.values(DEFAULT_MODEL_OF)].join(',');
    const child = spawn(rollerBin, ['scripted-model', '--require-key-env', 'ROLLER_E2E_API_KEY', '--models', names, '--max-requests', '5000'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ROLLER_E2E_API_KEY: key } });
    state.child = child;
    state.url = ((await once(createInterface({ input: child.stdout! }), 'line')) as [string])[0];
    const own: Record<string, string> = { 'claude-code': 'anthropic-messages', codex: 'openai-responses' };
    const entries = Object.fromEntries(
      ['claude-code', 'codex', 'opencode', 'pi', 'openclaw', 'deepseek', 'hermes'].map((h) => {
        const protocol = own[h] ?? 'openai-chat-completions';
        return [`api/${h}`, { api_base: protocol === 'anthropic-messages' ? state.url : `${state.url}/v1`, api_key_env: 'ROLLER_E2E_API_KEY', model: DEFAULT_MODEL_OF[h] ?? SERVED_MODEL }];
      }),
    );
    state.models = join(tmp.path, 'provider-models.json');
    await writeFile(state.models, JSON.stringify({ models: entries }));
  }, 60_000);
  afterAll(() => void state.child?.kill('SIGKILL'));
  return {
    /** The test process's environment as it is now (a DOCKER_HOST set after this was made included), with the key. */
    get env() {
      return { ...process.env, ROLLER_E2E_API_KEY: key };
    },
    key,
    get models() {
      return state.models;
    },
    get url() {
      return state.url;
    },
  };
}
