import { mkdirInside, writeFileInside } from '../../core/inside-root.js';
import { existsSync } from 'node:fs';
import { copyFile, readFile, realpath, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ProcessPlan } from '../../sources/process-runner.js';
import { isolatedHomeEnv, type HarnessLaunch } from '../launch.js';

/** Where dsh keeps its session logs under a HOME: sessions/<cwd with / as ->/<session id>/session.jsonl.zstd. */
export const dshSessionsDir = (home: string) => join(home, '.dsh', 'sessions');

/** The most bytes of a task dsh's headless profile takes: it reads the task from argv, where one argument holds 128 KiB. */
export const DSH_MAX_PROMPT_BYTES = 128 * 1024 - 1;

/** roller's driver as compiled (driver.js); run from source, driver.ts, which Node 24 loads as .mts (erasable types only). */
function driverScript(): { path: string; ext: 'mjs' | 'mts' } {
  const js = fileURLToPath(new URL('./driver.js', import.meta.url));
  return existsSync(js) ? { path: js, ext: 'mjs' } : { path: fileURLToPath(new URL('./driver.ts', import.meta.url)), ext: 'mts' };
}

/**
 * roller's driver beside the install's node_modules (so dsh's own packages resolve from it), written once per install
 * (a fresh copy renamed into place: concurrent samples never see half a file).
 */
async function installDriver(bin: string): Promise<string> {
  const prefix = dirname(dirname(dirname(bin))); // <prefix>/node_modules/.bin/dsh
  const script = driverScript();
  const target = join(prefix, `roller-dsh-driver.${script.ext}`);
  const source = await readFile(script.path, 'utf8');
  if ((await readFile(target, 'utf8').catch(() => null)) === source) return target;
  const partial = `${target}.${process.pid}.${Date.now()}`;
  await copyFile(script.path, partial);
  await rename(partial, target);
  return target;
}

/**
 * `dsh --profile headless "<task>"` offline on its Node 24 runtime (docs/harness-notes/deepseek.md): a fresh HOME
 * (its profile, sessions and anonymous id live under it), temporary files inside it, the DeepSeek provider at the
 * recording proxy (DEEPSEEK_BASE_URL is the base without /v1), and every action allowed without asking — a headless
 * run has no one to ask. It answers one task, prints the final assistant text and exits — through roller's driver
 * (driver.ts), which lets background sub-agents settle and the root answer their notices first.
 */
/**
 * A second delegation tool whose children may only read (`subagent_reader`): a tool row like dsh-base's own
 * `tool-subagent`, with a toolFilter. Only where asked (verify's different-tool-configurations scenario).
 */
export const DSH_READER_TOOL = 'subagent_reader';
const READER_DENIES = ['bash', 'write', 'edit', 'str_replace_editor', 'workflow', 'job_kill', 'subagent', 'subagent_fork', DSH_READER_TOOL, 'send_message'];

export async function deepSeekPlan(launch: HarnessLaunch & { runtime: string; readerTool?: boolean }): Promise<ProcessPlan> {
  if (Buffer.byteLength(launch.prompt) > DSH_MAX_PROMPT_BYTES) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the prompt is ${Buffer.byteLength(launch.prompt)} bytes: dsh's headless profile takes the task as one argument, at most ${DSH_MAX_PROMPT_BYTES} bytes`);
  }
  const tmp = join(launch.home, 'tmp');
  await mkdirInside(launch.home, tmp);
  const driver = await installDriver(launch.bin);
  const patch = join(launch.home, '.roller-dsh-patch.yml');
  await writeFileInside(launch.home, patch,
    [
      '# roller: its driver in place of headless-runner (src/harnesses/deepseek/driver.ts)',
      '- id: headless-runner',
      '  disabled: true',
      // The model every agent of the run starts on (dsh's own default is deepseek-v4-flash).
      ...(launch.model ? ['- id: agent-default-model', '  config:', '    provider: deepseek-official', `    model: ${JSON.stringify(launch.model)}`] : []),
      '- insert:',
      '    - id: roller-headless-runner',
      `      name: ${JSON.stringify(driver)}`,
      '      inject: [headlessStartup]',
      '      config:',
      '        task: !!js ctx.headlessStartup.task',
      ...(launch.readerTool
        ? [
            '    - id: roller-tool-subagent-reader',
            "      name: '@deepseek-ai/dsh-tool-subagent'",
            '      config:',
            '        provider: spawn',
            `        toolName: ${DSH_READER_TOOL}`,
            '        backgroundMode: one-shot',
            '        enableRunInBackground: false',
            `        toolFilter: { deny: ${JSON.stringify(READER_DENIES)} }`,
          ]
        : []),
      '',
    ].join('\n'),
  );
  return {
    command: launch.runtime,
    // The CLI's own script, run by the runtime (its #!/usr/bin/env node would find roller's Node 20 otherwise).
    args: [await realpath(launch.bin), '--profile', 'headless', '--patch', patch, ...(launch.extraArgs ?? []), launch.prompt],
    cwd: launch.work,
    env: {
      ...isolatedHomeEnv(launch.home, dirname(launch.runtime)),
      TMPDIR: tmp,
      DEEPSEEK_BASE_URL: launch.baseUrl.replace(/\/+$/, ''),
      // Its web_search tool is a Messages API call of its own: through the same base, so no model call bypasses the proxy.
      DEEPSEEK_SEARCH_BASE_URL: launch.baseUrl.replace(/\/+$/, ''),
      DSH_TELEMETRY_DISABLED: '1',
      DEEPSEEK_API_KEY: launch.apiKey,
      DSH_PERMISSION_MODE: 'danger-full-access',
    },
  };
}
