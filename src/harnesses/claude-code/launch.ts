import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { promptFile, type HarnessLaunch } from '../launch.js';
import { releasedSince } from '../release.js';
import { claudeCodeEnv } from './env.js';

/** home holds HOME, CLAUDE_CONFIG_DIR (home/.claude) and CLAUDE_CODE_TMPDIR (home/tmp); baseUrl is ANTHROPIC_BASE_URL. */
/** Flags by the first release whose `claude --help` lists them (read off the version matrix's installs). */
export const CLAUDE_CODE_FLAGS_SINCE = { forwardSubagentText: '2.1.211', effort: '2.1.50' } as const;

export interface ClaudeCodeLaunch extends HarnessLaunch {
  /** The CLI's release (absent: the pinned one's flags). */
  version?: string;
  /** --forward-subagent-text: sub-agent text and thinking also on stdout (default true). */
  forwardSubagentText?: boolean;
  /** `--thinking off`: MAX_THINKING_TOKENS=0, Claude Code's own switch (it then sends no effort). */
  thinkingOff?: boolean;
  /** The context window Claude Code assumes and where it auto-compacts (a model config's context settings). */
  context?: { window?: number; autoCompactPercent?: number };
}

const CONNECTION_ENV = ['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY', 'HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy', 'NO_PROXY', 'no_proxy'] as const;

/** The native config dir of a launch: where the session files are read from afterwards. */
export const claudeConfigDir = (home: string) => join(home, '.claude');

/** Headless `claude -p` with stream-json stdout, offline, in a fresh HOME (reference/harnesses/claude-code.md §3). */
export async function claudeCodePlan(launch: ClaudeCodeLaunch): Promise<ProcessPlan> {
  await mkdir(claudeConfigDir(launch.home), { recursive: true });
  await mkdir(join(launch.home, 'tmp'), { recursive: true, mode: 0o700 });
  // The prompt on stdin (no positional prompt): argv would cap it at 128 KB.
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
  if ((launch.forwardSubagentText ?? true) && releasedSince(launch.version, CLAUDE_CODE_FLAGS_SINCE.forwardSubagentText)) args.push('--forward-subagent-text');
  args.push(...(launch.extraArgs ?? []));
  const extra: Record<string, string> = {};
  if (launch.thinkingOff) extra.MAX_THINKING_TOKENS = '0';
  // Claude Code clamps a window below 100k up to 100k; the percentage then lowers the threshold below it.
  if (launch.context?.window !== undefined) extra.CLAUDE_CODE_AUTO_COMPACT_WINDOW = String(launch.context.window);
  if (launch.context?.autoCompactPercent !== undefined) extra.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE = String(launch.context.autoCompactPercent);
  const env = claudeCodeEnv({ home: launch.home, baseUrl: launch.baseUrl, apiKey: launch.apiKey, extra });
  // The endpoint, credential and proxies again as --settings, which outranks every settings file a task or the agent
  // could write in the work dir or HOME (only managed settings rank higher): nothing there can move the model calls.
  args.push('--settings', JSON.stringify({ env: Object.fromEntries(CONNECTION_ENV.filter((k) => env[k] !== undefined).map((k) => [k, env[k]])) }));
  return { command: launch.bin, args, cwd: launch.work, env, stdin: await promptFile(launch) };
}
