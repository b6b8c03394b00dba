import { copyFileInside, mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, PI_AI_API, promptFile, SCRIPTED_MODEL_ID, sdkBaseUrl, type HarnessLaunch } from '../launch.js';
import type { GatewaySessionSpec } from './gateway-session.js';

/**
 * How OpenClaw runs a task: through a local Gateway (default; `sessions_spawn` children run and report
 * back), or as one embedded `agent exec` turn (no Gateway; a spawn is refused, so no child ever runs).
 */
export type OpenClawMode = 'gateway' | 'exec';

/** Where `--state-dir` keeps OpenClaw's stores under a HOME laid out by openclawPlan. */
export const openClawStateDir = (home: string) => join(home, '.openclaw', 'state');

/**
 * OpenClaw on the Node 24 runtime installed with it, offline (reference/harnesses/openclaw.md): a provider
 * `roller` (openai-completions) at the recording proxy with the key from the environment, tool search off so
 * every tool is offered, updates/Bonjour/channels/onboarding off, outbound HTTP(S) pointed at a closed port
 * (loopback excepted), and a state dir that is kept (without one exec deletes its store at exit).
 * Gateway mode (default) runs gateway-session.js: a loopback Gateway with a per-attempt token, the task by
 * `openclaw agent`, and a wait for every sub-agent's completion to be delivered.
 */
/** Where a launch's OpenClaw cache trace is written (OPENCLAW_CACHE_TRACE_FILE), under its HOME. */
export const openClawCacheTraceFile = (home: string) => join(home, 'cache-trace.jsonl');

/** Where the Gateway launcher writes how the wait for sub-agents ended (DrainReport), under the HOME. */
export const openClawDrainReportFile = (home: string) => join(home, 'roller-drain.json');

/** The exit code of the Gateway launcher when sub-agents did not settle: the agent's turn itself succeeded. */
export const OPENCLAW_DRAIN_FAILED_EXIT = 71;

/**
 * An agent beside `main` with a tool policy of its own (2026.9.6: agents.entries.<id>.tools): `main` may spawn it
 * by `sessions_spawn` agentId (its entry's subagents.allowAgents), and it keeps its own store under agents/<id>/.
 */
export interface OpenClawAgent {
  id: string;
  description?: string;
  tools?: { allow?: string[]; deny?: string[] };
}

export async function openclawPlan(
  launch: HarnessLaunch & { runtime: string; thinking?: string; mode?: OpenClawMode; timeoutS?: number; cacheTrace?: boolean; agents?: OpenClawAgent[] },
): Promise<ProcessPlan> {
  const mode = launch.mode ?? 'gateway';
  const state = openClawStateDir(launch.home);
  await mkdirInside(launch.home, state);
  const model = launch.model ?? SCRIPTED_MODEL_ID;
  const protocol = launch.protocol ?? 'openai-chat-completions';
  // --thinking: the model is declared a reasoning one (else no reasoning control is sent) and `--thinking` sets the level.
  const reasoning = launch.thinking !== undefined && launch.thinking !== 'off';
  const thinkingArgs = launch.thinking ? ['--thinking', launch.thinking] : [];
  const config = join(launch.home, '.openclaw', 'openclaw.json');
  const port = mode === 'gateway' ? await freePort() : 0;
  await writeFileInside(launch.home, config,
    JSON.stringify(
      {
        update: { checkOnStart: false },
        ...(mode === 'gateway' ? { gateway: { mode: 'local', bind: 'loopback', port, auth: { mode: 'token', token: '${OPENCLAW_GATEWAY_TOKEN}' } } } : {}),
        models: {
          mode: 'replace',
          providers: {
            roller: {
              baseUrl: sdkBaseUrl(launch.baseUrl, protocol),
              apiKey: '${ROLLER_PROVIDER_KEY}', // read from the environment by OpenClaw, never written here
              api: PI_AI_API[protocol],
              models: [{ id: model, name: model, reasoning, ...(reasoning && protocol === 'openai-chat-completions' ? { compat: { supportsReasoningEffort: true } } : {}), input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }],
            },
          },
        },
        tools: { toolSearch: false },
        agents: {
          defaults: {
            model: { primary: `roller/${model}` },
            ...(mode === 'gateway' ? { workspace: launch.work } : {}),
          },
          // main still spawns itself when no agentId is given (OpenClaw's self-spawn rule).
          ...(launch.agents?.length
            ? { entries: { main: { default: true, subagents: { allowAgents: launch.agents.map((a) => a.id) } }, ...Object.fromEntries(launch.agents.map(({ id, ...entry }) => [id, entry])) } }
            : {}),
        },
      },
      null,
      2,
    ),
  );
  const env = {
    ...isolatedHomeEnv(launch.home, join(launch.runtime, '..')),
    // Scratch files stay in the attempt. (Its file log does not: OpenClaw 2026.9.6 writes /tmp/openclaw/openclaw-<date>.log
    // whatever TMPDIR or logging.file say; the Gateway's log also reaches the sample's stderr log.)
    TMPDIR: join(launch.home, 'tmp'),
    NO_COLOR: '1',
    ROLLER_PROVIDER_KEY: launch.apiKey,
    OPENCLAW_STATE_DIR: state,
    OPENCLAW_CONFIG_PATH: config,
    OPENCLAW_NO_AUTO_UPDATE: '1',
    OPENCLAW_DISABLE_BONJOUR: '1',
    OPENCLAW_SKIP_CHANNELS: '1',
    OPENCLAW_NO_ONBOARD: '1',
    OPENCLAW_SKIP_ONBOARDING: '1',
    OPENCLAW_NO_RESPAWN: '1',
    // Anything that tries the network (the Gateway refreshes a remote model catalog) fails at once.
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost,::1',
    // OpenClaw's own cache trace (seeds/003: on by default for OpenClaw): each model call's system prompt and context.
    ...(launch.cacheTrace ? { OPENCLAW_CACHE_TRACE: '1', OPENCLAW_CACHE_TRACE_FILE: openClawCacheTraceFile(launch.home) } : {}),
  };
  await mkdirInside(launch.home, env.TMPDIR);
  if (mode === 'exec') {
    return {
      command: launch.runtime,
      args: [launch.bin, 'agent', 'exec', '--config', config, '--state-dir', state, '--cwd', launch.work, '--model', `roller/${model}`, '--json', '--timeout', '600', ...thinkingArgs, ...(launch.extraArgs ?? []), '--message-file', '-'],
      cwd: launch.work,
      env,
      stdin: await promptFile(launch),
    };
  }
  const timeoutS = launch.timeoutS ?? 600;
  const spec: GatewaySessionSpec = {
    bin: launch.bin,
    port,
    agentArgs: ['--agent', 'main', '--model', `roller/${model}`, '--json', '--timeout', String(timeoutS), ...thinkingArgs, ...(launch.extraArgs ?? []), '--message-file', await promptFile(launch)],
    readyTimeoutMs: 180_000,
    settleTimeoutMs: timeoutS * 1000,
    pollMs: 1000,
    // The Gateway's stop (up to 15 s) and the report fit before the sample's timeout kills the process group.
    ...(timeoutS > 60 ? { budgetMs: (timeoutS - 30) * 1000 } : {}),
    reportPath: openClawDrainReportFile(launch.home),
  };
  const specPath = join(launch.home, 'roller-gateway-session.json');
  await writeFileInside(launch.home, specPath, JSON.stringify(spec, null, 2));
  // The launcher goes into the attempt's HOME beside its spec: a container (--runner docker) mounts HOME, not
  // roller's install. As .mjs/.mts: no package.json there says "module".
  const source = gatewaySessionScript();
  const script = join(launch.home, `roller-gateway-session${source.endsWith('.ts') ? '.mts' : '.mjs'}`);
  await copyFileInside(launch.home, source, script);
  return {
    command: launch.runtime,
    args: [script, specPath],
    cwd: launch.work,
    // A token per attempt: only this run's CLI calls may drive its Gateway.
    env: { ...env, OPENCLAW_GATEWAY_TOKEN: randomBytes(16).toString('hex') },
  };
}

/** The compiled launcher next to this module (under vitest, the .ts source, which Node 24 runs by stripping types). */
function gatewaySessionScript(): string {
  const js = fileURLToPath(new URL('./gateway-session.js', import.meta.url));
  return existsSync(js) ? js : fileURLToPath(new URL('./gateway-session.ts', import.meta.url));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
