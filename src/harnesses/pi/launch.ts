import { copyFileInside, mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, PI_AI_API, promptFile, SCRIPTED_MODEL_ID, sdkBaseUrl, type HarnessLaunch } from '../launch.js';
import { releasedSince } from '../release.js';

/** The first release of the matrix that reads the prompt of `-p` from stdin (0.45.7 and before take it as an argument). */
export const PI_STDIN_PROMPT_SINCE = '0.49.2';

/** Pi's agent dir under a HOME laid out by piPlan: sessions/<cwd>/<time>_<uuid>.jsonl live below it. */
export const piAgentDir = (home: string) => join(home, '.pi', 'agent');

/** Where roller's recorder extension writes its events (roller.pi-events/v1), beside the sessions. */
export const piEventsFile = (home: string) => join(piAgentDir(home), 'roller-events.jsonl');

/**
 * `pi --mode json -p` headless and offline (reference/harnesses/pi.md): a fresh HOME (no extension but roller's
 * observing recorder, so delegation is not available in this profile), a provider `roller` (openai-completions) at the
 * recording proxy, and roller's identity header injected through models.json — Pi sends no session header
 * of its own; the proxy removes x-roller-* before forwarding and keeps the value as identity.
 */
export async function piPlan(launch: HarnessLaunch & { thinking?: string; sessionId?: string; subagentExtension?: boolean; version?: string }): Promise<ProcessPlan> {
  const agent = piAgentDir(launch.home);
  await mkdirInside(launch.home, agent);
  const model = launch.model ?? SCRIPTED_MODEL_ID;
  const protocol = launch.protocol ?? 'openai-chat-completions';
  // --thinking: the model is declared a reasoning one (else Pi sends no reasoning control) and Pi's own --thinking sets the level.
  const reasoning = launch.thinking !== undefined && launch.thinking !== 'off';
  if (launch.subagentExtension) await installSubagentExtension(launch.bin, agent, `roller/${model}`);
  // roller's recorder: an observing extension (contexts, provider payloads, turn boundaries); releases without
  // extensions (before 0.35) leave it unloaded and write no events.
  await mkdirInside(launch.home, join(agent, 'extensions'));
  await copyFileInside(launch.home, recorderScript(), join(agent, 'extensions', 'roller-recorder.ts'));
  await writeFileInside(launch.home, join(agent, 'models.json'),
    JSON.stringify(
      {
        providers: {
          roller: {
            baseUrl: sdkBaseUrl(launch.baseUrl, protocol),
            api: PI_AI_API[protocol],
            apiKey: 'ROLLER_PROVIDER_KEY', // the name of the variable holding the key, never the key
            // Only through roller's proxy, which removes it: never sent to a model API directly.
            ...(launch.recorded === false ? {} : { headers: { 'x-roller-session-id': launch.sessionId ?? randomUUID() } }),
            ...(protocol === 'openai-chat-completions' ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: reasoning } } : {}),
            models: [{ id: model, name: model, reasoning, input: ['text'], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
          },
        },
      },
      null,
      2,
    ),
  );
  await writeFileInside(launch.home, join(agent, 'settings.json'), JSON.stringify({ enableInstallTelemetry: false, defaultProvider: 'roller', defaultModel: model, quietStartup: true }));
  return {
    command: launch.bin,
    // -p with the prompt on stdin: argv would cap it at 128 KB.
    // Older releases take the prompt as an argument (capped at 128 KB by argv); the rest read it from stdin.
    args: ['--provider', 'roller', '--model', model, '--mode', 'json', ...(launch.thinking ? ['--thinking', launch.thinking] : []), ...(launch.extraArgs ?? []), '-p', ...(releasedSince(launch.version, PI_STDIN_PROMPT_SINCE) ? [] : [launch.prompt])],
    cwd: launch.work,
    stdin: await promptFile(launch),
    env: {
      ...isolatedHomeEnv(launch.home),
      ROLLER_PROVIDER_KEY: launch.apiKey,
      PI_OFFLINE: '1',
      PI_SKIP_VERSION_CHECK: '1',
      PI_TELEMETRY: '0',
      ROLLER_PI_EVENTS: piEventsFile(launch.home),
    },
  };
}

/**
 * The example sub-agent extension Pi ships (examples/extensions/subagent): its code under extensions/ and its
 * agents under agents/, their pinned models pointed at roller's provider. The child runs as another pi
 * process whose transcript Pi keeps in the parent's toolResult (the child writes no session file).
 */
async function installSubagentExtension(bin: string, agentDir: string, model: string): Promise<void> {
  // bin: node_modules/.bin/pi -> ../@mariozechner/pi-coding-agent/dist/cli.js
  const pkg = dirname(dirname(await realpath(bin)));
  const example = join(pkg, 'examples', 'extensions', 'subagent');
  if (!existsSync(join(example, 'index.ts'))) {
    throw new RollerError(ErrorCode.HARNESS_FEATURE_ABSENT, `${pkg}: this Pi release ships no example sub-agent extension (examples/extensions/subagent); run it without --pi-subagent-extension`);
  }
  await mkdirInside(agentDir, join(agentDir, 'extensions', 'subagent'));
  for (const f of ['index.ts', 'agents.ts']) await copyFileInside(agentDir, join(example, f), join(agentDir, 'extensions', 'subagent', f));
  await mkdirInside(agentDir, join(agentDir, 'agents'));
  for (const f of (await readdir(join(example, 'agents'))).filter((x) => x.endsWith('.md'))) {
    const text = await readFile(join(example, 'agents', f), 'utf8');
    await writeFileInside(agentDir, join(agentDir, 'agents', f), text.replace(/^model: .*$/m, `model: ${model}`));
  }
}

/** The compiled recorder next to this module (under vitest, its .ts source, which Pi loads as well). */
function recorderScript(): string {
  const js = fileURLToPath(new URL('./recorder-extension.js', import.meta.url));
  return existsSync(js) ? js : fileURLToPath(new URL('./recorder-extension.ts', import.meta.url));
}
