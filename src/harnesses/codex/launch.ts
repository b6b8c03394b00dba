import { mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { promptFile, SCRIPTED_MODEL_ID, type HarnessLaunch } from '../launch.js';

/** Verified against @openai/codex 0.171.0 (reference/harnesses/codex.md). */
export const CODEX_VERIFIED_VERSIONS = ['0.171.0'] as const;

/** home is CODEX_HOME (config.toml, sessions/) and HOME; baseUrl gets /v1 appended for the provider. */
export interface CodexLaunch extends HarnessLaunch {
  /** roller's identity headers, sent on every request and stripped by the proxy before forwarding. */
  rollerHeaders?: Record<string, string>;
  /** Responses over WebSocket (the proxy relays and records it); default HTTP SSE. */
  websocket?: boolean;
  json?: boolean;
  /**
   * Continue this thread (the root's confirmed id) with the prompt: `codex exec resume <id>`. Never
   * `--last`, which picks the newest rollout — after a delegation that is a child's (seeds/000).
   */
  resumeThreadId?: string;
  /**
   * Agent roles (config.toml `[agents.<name>]`): each a description and the TOML its children's config is
   * layered with (written to <home>/<name>.toml). With one defined, spawn_agent offers `agent_type`.
   */
  roles?: Readonly<Record<string, { description: string; config: string }>>;
  /** `[agents] max_depth`: how deep sub-agents may spawn their own (Codex's default lets only the root spawn). */
  agentsMaxDepth?: number;
}

const toml = (s: string) => JSON.stringify(s); // a TOML basic string is JSON-compatible for these values

/**
 * The config.toml that runs Codex headless and offline: the model provider points at the recording proxy
 * (wire_api responses), approvals never, and the features that phone home at start-up off (plugins,
 * remote_plugin, apps, tool_suggest, skill_mcp_dependency_install); no login shell.
 */
export function codexConfig(launch: Pick<CodexLaunch, 'baseUrl' | 'model' | 'rollerHeaders' | 'websocket' | 'roles' | 'agentsMaxDepth'>): string {
  const headers = Object.entries(launch.rollerHeaders ?? {})
    .map(([k, v]) => `${toml(k)} = ${toml(v)}`)
    .join(', ');
  return [
    `model = ${toml(launch.model ?? SCRIPTED_MODEL_ID)}`,
    'model_provider = "roller"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    'web_search = "disabled"',
    'allow_login_shell = false',
    '',
    '[model_providers.roller]',
    'name = "roller recording proxy"',
    `base_url = ${toml(`${launch.baseUrl.replace(/\/+$/, '')}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "ROLLER_PROVIDER_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    'stream_idle_timeout_ms = 60000',
    `supports_websockets = ${launch.websocket === true}`,
    ...(headers ? [`http_headers = { ${headers} }`] : []),
    '',
    '[analytics]',
    'enabled = false',
    '[feedback]',
    'enabled = false',
    '[otel]',
    'exporter = "none"',
    'log_user_prompt = false',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    'tool_suggest = false',
    'skill_mcp_dependency_install = false',
    '',
    ...(launch.agentsMaxDepth === undefined ? [] : ['[agents]', `max_depth = ${launch.agentsMaxDepth}`, '']),
    ...Object.entries(launch.roles ?? {}).flatMap(([name, r]) => [`[agents.${name}]`, `description = ${toml(r.description)}`, `config_file = ${toml(`${name}.toml`)}`, '']),
  ].join('\n');
}

/**
 * `codex exec --skip-git-repo-check [--json] [resume <thread id>] PROMPT`, stdin closed. A fresh CODEX_HOME
 * for a new task; the same one (config.toml rewritten, sessions kept) to resume.
 */
export async function codexPlan(launch: CodexLaunch): Promise<ProcessPlan> {
  await mkdirInside(launch.home, launch.home);
  for (const name of Object.keys(launch.roles ?? {})) {
    // A TOML bare key and a file name both.
    if (!/^[a-z][a-z0-9_-]*$/.test(name)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `codex agent role '${name}': use lowercase letters, digits, _ and -`);
  }
  await writeFileInside(launch.home, join(launch.home, 'config.toml'), codexConfig(launch));
  for (const [name, role] of Object.entries(launch.roles ?? {})) await writeFileInside(launch.home, join(launch.home, `${name}.toml`), role.config);
  const nowhere = 'http://127.0.0.1:9';
  return {
    command: launch.bin,
    args: [
      'exec',
      // The provider and its endpoint again as -c, which outranks every config file (a project's .codex/config.toml
      // included): nothing in the work dir or HOME can move the model calls away from the proxy.
      '-c',
      'model_provider="roller"',
      '-c',
      `model_providers.roller.base_url=${toml(`${launch.baseUrl.replace(/\/+$/, '')}/v1`)}`,
      '--skip-git-repo-check',
      ...(launch.json === false ? [] : ['--json']),
      ...(launch.extraArgs ?? []),
      ...(launch.resumeThreadId ? ['resume', launch.resumeThreadId] : []),
      '-', // the prompt on stdin: argv would cap it at 128 KB
    ],
    cwd: launch.work,
    stdin: await promptFile(launch),
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      HOME: launch.home,
      CODEX_HOME: launch.home,
      ROLLER_PROVIDER_KEY: launch.apiKey,
      // Anything that is not the model API fails at once instead of leaving the machine.
      HTTPS_PROXY: nowhere,
      HTTP_PROXY: nowhere,
      ALL_PROXY: nowhere,
      NO_PROXY: '127.0.0.1,localhost',
    },
  };
}
