import { writeFileInside } from '../core/inside-root.js';
import { join } from 'node:path';

/**
 * The environment of a harness that keeps everything under one fresh HOME: nothing inherited but PATH
 * (a runtime's bin dir first when given), the XDG dirs inside HOME.
 */
export function isolatedHomeEnv(home: string, pathFirst?: string): Record<string, string> {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  return {
    PATH: pathFirst ? `${pathFirst}:${path}` : path,
    LANG: 'C.UTF-8',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
}

/** What every harness launch plan needs, whatever the harness. */
export interface HarnessLaunch {
  /** The installed CLI (`roller harness install <name>`). */
  bin: string;
  prompt: string;
  /** A fresh directory per attempt: the harness's HOME and config/state dirs live under it. */
  home: string;
  /** The task's work directory. */
  work: string;
  /** The recording proxy, as the model API's base URL (with --wire-trace off: the model API's own). */
  baseUrl: string;
  /** false: no recording proxy stands between the CLI and the model API (--wire-trace off), so the CLI sends nothing roller-specific. */
  recorded?: boolean;
  /** Handed to the CLI; forwarded by the proxy, never written. */
  apiKey: string;
  extraArgs?: string[];
}

/** The fields of a run's launch every harness's plan takes as they are (a plan adds its own after). */
export const launchFields = (l: HarnessLaunch): HarnessLaunch => ({
  bin: l.bin,
  prompt: l.prompt,
  home: l.home,
  work: l.work,
  baseUrl: l.baseUrl,
  ...(l.recorded === false ? { recorded: false } : {}),
  apiKey: l.apiKey,
  ...(l.extraArgs ? { extraArgs: l.extraArgs } : {}),
});

/**
 * The prompt as a file in the attempt's HOME, for the CLI to read on stdin or from a file: argv holds at most 128 KB
 * per argument (E2BIG), prompts may be megabytes. One file per launch (a follow-up writes its own).
 */
export async function promptFile(launch: HarnessLaunch, name = 'prompt'): Promise<string> {
  const path = join(launch.home, `.roller-${name}.txt`);
  await writeFileInside(launch.home, path, launch.prompt, 0o600);
  return path;
}
