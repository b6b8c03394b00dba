import { join } from 'node:path';

/**
 * The environment that runs Claude Code headless and offline (reference/harnesses/claude-code.md §3):
 * a fresh HOME / config / tmp dir, the model API at `baseUrl` (our recording proxy), every switch that
 * stops it phoning home, and any proxy for other traffic pointed at a closed port so that an attempt
 * fails at once instead of leaving the machine. Nothing is inherited from the caller's environment
 * except PATH and the locale.
 */
export function claudeCodeEnv(options: { home: string; baseUrl: string; apiKey: string; extra?: Record<string, string> }): Record<string, string> {
  const nowhere = 'http://127.0.0.1:9';
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    HOME: options.home,
    CLAUDE_CONFIG_DIR: join(options.home, '.claude'),
    CLAUDE_CODE_TMPDIR: join(options.home, 'tmp'),
    TMPDIR: join(options.home, 'tmp'),
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: options.apiKey,
    HTTPS_PROXY: nowhere,
    HTTP_PROXY: nowhere,
    https_proxy: nowhere,
    http_proxy: nowhere,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENABLE_TELEMETRY: '0',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_UPDATES: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    DISABLE_GROWTHBOOK: '1',
    CLAUDE_CODE_DISABLE_FEATURE_FLAGS: '1',
    DISABLE_INSTALLATION_CHECKS: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    DISABLE_COST_WARNINGS: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL: '1',
    ...options.extra,
  };
  // --dangerously-skip-permissions refuses to run as root unless the CLI is told it is sandboxed.
  if (process.getuid?.() === 0) env.IS_SANDBOX = '1';
  return env;
}
