import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { rollerBin } from './paths.js';

type Json = Record<string, any>;

/**
 * An e2e file's shared setup: the pinned harness CLI (installed with `roller harness install`, failing
 * loudly when it cannot be), one `roller scripted-model`, and `startRoller` for more roller processes;
 * every process is killed after the file.
 */
export function useE2e(harness: string): {
  readonly bin: string;
  readonly modelUrl: string;
  startRoller(...args: string[]): Promise<{ child: ChildProcess; url: string }>;
} {
  const children: ChildProcess[] = [];
  const state = { bin: '', modelUrl: '' };
  const startRoller = async (...args: string[]) => {
    const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    return { child, url };
  };
  beforeAll(async () => {
    try {
      state.bin = (await promisify(execFile)(rollerBin, ['harness', 'install', harness], { timeout: 15 * 60_000 })).stdout.trim();
    } catch (err) {
      throw new Error(`${harness} could not be installed with 'roller harness install ${harness}', so the e2e cannot run: ${(err as Error).message}`);
    }
    state.modelUrl = (await startRoller('scripted-model')).url;
  }, 15 * 60_000);
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
  });
  return {
    get bin() {
      return state.bin;
    },
    get modelUrl() {
      return state.modelUrl;
    },
    startRoller,
  };
}

/** The tokens a Codex thread should have: the Responses usage the server sent, input without cached input. */
export function codexTokensOf(usages: readonly Json[]): Record<string, number> {
  const sum = (f: (u: Json) => number) => usages.reduce((a, u) => a + f(u), 0);
  return {
    input: sum((u) => u.input_tokens - u.input_tokens_details.cached_tokens),
    cache_creation: 0,
    cache_read: sum((u) => u.input_tokens_details.cached_tokens),
    output: sum((u) => u.output_tokens),
    reasoning: sum((u) => u.output_tokens_details.reasoning_tokens),
  };
}
