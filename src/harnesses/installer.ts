import { execFile } from 'node:child_process';
import { access, mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeJsonAtomic } from '../core/atomic-write.js';
import { ErrorCode, RollerError } from '../core/errors.js';

const run = promisify(execFile);

/**
 * Harness CLIs pinned to the exact versions roller was verified against. Always install with the
 * version: npm on Node 20 silently picks an older Claude Code (2.1.197) when asked for "latest".
 */
export const PINNED_HARNESSES = {
  'claude-code': { package: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { package: '@openai/codex', version: '0.171.0', bin: 'codex' },
  opencode: { package: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  pi: { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
} as const;
export type InstallableHarness = keyof typeof PINNED_HARNESSES;

export interface InstalledHarness {
  name: InstallableHarness;
  package: string;
  version: string;
  dir: string;
  bin: string;
  reused: boolean;
}

export function defaultCacheDir(): string {
  if (process.env.ROLLER_CACHE_DIR) return process.env.ROLLER_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'roller', 'harnesses');
}

const MARKER = '.roller-installed.json';

/** Installs the pinned CLI into `<cache>/<name>-<version>` (once; later calls reuse it). */
export async function installHarness(name: InstallableHarness, options: { cacheDir?: string } = {}): Promise<InstalledHarness> {
  const pin = PINNED_HARNESSES[name];
  const dir = join(options.cacheDir ?? defaultCacheDir(), `${name}-${pin.version}`);
  const bin = join(dir, 'node_modules', '.bin', pin.bin);
  const result = { name, package: pin.package, version: pin.version, dir, bin };
  const marker = await readFile(join(dir, MARKER), 'utf8').catch(() => undefined);
  if (marker && (await access(bin).then(() => true, () => false))) return { ...result, reused: true };
  await mkdir(dir, { recursive: true });
  try {
    await run('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `${pin.package}@${pin.version}`], {
      maxBuffer: 16 << 20,
      timeout: 15 * 60_000,
    });
    await access(bin);
  } catch (cause) {
    throw new RollerError(
      ErrorCode.HARNESS_INSTALL_FAILED,
      `installing ${pin.package}@${pin.version} into ${dir} failed (${(cause as Error).message.split('\n')[0]}); check that the npm registry is reachable`,
      { cause },
    );
  }
  await writeJsonAtomic(join(dir, MARKER), { package: pin.package, version: pin.version, installed_at: new Date().toISOString() });
  return { ...result, reused: false };
}
