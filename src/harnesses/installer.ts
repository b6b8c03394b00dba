import { execFile } from 'node:child_process';
import { access, chmod, lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { writeJsonAtomic } from '../core/atomic-write.js';
import { ErrorCode, RollerError } from '../core/errors.js';

const run = promisify(execFile);

import { defaultCacheDir } from './cache-dir.js';
import { harnessAdapter } from './index.js';
import { installFromPypi } from './pypi-installer.js';
import type { HarnessPin } from './adapter.js';

export { defaultCacheDir };

export interface InstalledHarness {
  name: string;
  package: string;
  version: string;
  dir: string;
  bin: string;
  /** The Node binary the CLI runs on, when it is not roller's own (OpenClaw). */
  runtime?: string;
  reused: boolean;
}

const MARKER = '.roller-installed.json';

/** Where an install's command is: under its venv's bin/ (PyPI), else node_modules/.bin/. */
export function harnessBin(dir: string, pin: Pick<HarnessPin, 'bin' | 'pypi'>): string {
  return pin.pypi ? join(dir, 'venv', 'bin', pin.bin) : join(dir, 'node_modules', '.bin', pin.bin);
}

/**
 * Installs the CLI into `<cache>/<name>-<version>` (once; later calls reuse it): the pinned version, or `version`
 * (any released one: `roller harness versions NAME` lists those verified).
 */
export async function installHarness(name: string, options: { cacheDir?: string; version?: string; onProgress?: (message: string) => void } = {}): Promise<InstalledHarness> {
  const pinned = harnessAdapter(name).runner?.pin;
  if (!pinned) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${name}: roller has no pinned CLI for it (it reads its files: roller convert)`);
  if (options.version !== undefined && !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(options.version)) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${name}@${options.version}: give an exact released version (${pinned.pypi ? `pip index versions ${pinned.package}` : `npm view ${pinned.package} versions`} lists them)`);
  }
  if (pinned.source && options.version !== undefined && options.version !== pinned.version) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${name}@${options.version}: this harness installs from ${pinned.source}, which holds version ${pinned.version} only`);
  }
  const pin = { ...pinned, version: options.version ?? pinned.version };
  const dir = join(options.cacheDir ?? defaultCacheDir(), `${name}-${pin.version}`);
  const bin = harnessBin(dir, pin);
  const runtime = pin.runtime ? join(dir, pin.runtime.bin) : undefined;
  const result = { name, package: pin.package, version: pin.version, dir, bin, ...(runtime ? { runtime } : {}) };
  const marker = await readFile(join(dir, MARKER), 'utf8').catch(() => undefined);
  if (marker && (await access(bin).then(() => true, () => false))) {
    await openToAll(dir); // an install an older roller made under its umask 077
    return { ...result, reused: true };
  }
  await mkdir(dir, { recursive: true });
  const started = Date.now();
  if (pin.pypi) {
    options.onProgress?.(`installing ${pin.package}==${pin.version} from PyPI into a virtual environment in ${dir} (once: later runs reuse it)`);
    // A failed install leaves nothing (a half-made venv would be taken for one later).
    const { python, lock } = await installFromPypi({ package: pin.package, version: pin.version, python: pin.pypi.python }, dir).catch(async (err: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw err;
    });
    await access(bin);
    await openToAll(dir);
    await writeJsonAtomic(join(dir, MARKER), { package: pin.package, version: pin.version, registry: 'pypi', python, lock, installed_at: new Date().toISOString() });
    options.onProgress?.(`installed ${pin.package}==${pin.version} on Python ${python} in ${((Date.now() - started) / 1000).toFixed(1)} s (hashes in ${lock})`);
    return { ...result, reused: false };
  }
  options.onProgress?.(`installing ${pin.source ?? `${pin.package}@${pin.version}`}${pin.runtime ? ` with its Node ${pin.runtime.version}` : ''} from npm into ${dir} (once: later runs reuse it)`);
  try {
    // One install for the runtime and the CLI (a second --no-save install would prune the first); the
    // runtime's bin dir is first on PATH before it exists, so the CLI's install scripts run on it.
    const env = { ...process.env };
    const packages = [pin.source ?? `${pin.package}@${pin.version}`, ...(pin.install?.packages ?? [])];
    if (pin.runtime) {
      packages.unshift(`${pin.runtime.package}@${pin.runtime.version}`);
      env.PATH = `${dirname(join(dir, pin.runtime.bin))}:${env.PATH ?? ''}`;
    }
    await run('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', ...(pin.install?.npmFlags ?? []), ...packages], {
      maxBuffer: 16 << 20,
      timeout: 15 * 60_000,
      env,
    });
    await access(bin);
    await openToAll(dir);
  } catch (cause) {
    throw new RollerError(
      ErrorCode.HARNESS_INSTALL_FAILED,
      `installing ${pin.package}@${pin.version} into ${dir} failed (${npmSaid(cause)}); check that the npm registry is reachable and that the version exists (npm view ${pin.package} versions)`,
      { cause },
    );
  }
  await writeJsonAtomic(join(dir, MARKER), { package: pin.package, version: pin.version, installed_at: new Date().toISOString() });
  options.onProgress?.(`installed ${pin.package}@${pin.version} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { ...result, reused: false };
}

/**
 * The install readable and runnable by every user (a+rX): roller's umask (077) is npm's too, and a container's
 * non-root user must run the CLI it mounts. Published code from npm: nothing in it is private. Links are not followed.
 */
async function openToAll(dir: string): Promise<void> {
  const top = await lstat(dir);
  if ((top.mode & 0o005) === 0o005) return;
  const open = async (path: string, st: Stats): Promise<void> => {
    if (st.isSymbolicLink()) return;
    const exec = st.isDirectory() || (st.mode & 0o100) !== 0 ? 0o555 : 0o444;
    await chmod(path, (st.mode & 0o7777) | exec);
  };
  await open(dir, top);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    await open(path, await lstat(path));
  }
}

/** What npm itself said of a failed install (its error lines), else the first line of the failure. */
function npmSaid(cause: unknown): string {
  const stderr = String((cause as { stderr?: unknown }).stderr ?? '');
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^npm (error|ERR!)/.test(l) && !/complete log|A log of/i.test(l))
    .map((l) => l.replace(/^npm (error|ERR!)\s*/, ''))
    .filter(Boolean);
  return lines.length > 0 ? `npm: ${lines.slice(0, 3).join('; ')}` : (cause as Error).message.split('\n')[0]!;
}

/** When each version of the harness's package was published (npm's `time`, PyPI's upload times), by version; empty when neither can say. */
export async function releaseDates(name: string): Promise<Record<string, string>> {
  const pinned = harnessAdapter(name).runner?.pin;
  if (!pinned) return {};
  if (pinned.pypi) return pypiReleaseDates(pinned.package);
  try {
    const { stdout } = await run('npm', ['view', pinned.package, 'time', '--json'], { maxBuffer: 64 << 20, timeout: 120_000 });
    const time = JSON.parse(stdout) as Record<string, string>;
    return Object.fromEntries(Object.entries(time).filter(([v]) => /^\d/.test(v)).map(([v, t]) => [v, t.slice(0, 10)]));
  } catch {
    return {};
  }
}

/** PyPI's upload date of each release's first file (its JSON API), by version; empty when PyPI cannot say. */
async function pypiReleaseDates(pkg: string): Promise<Record<string, string>> {
  try {
    const res = await fetch(`https://pypi.org/pypi/${encodeURIComponent(pkg)}/json`, { signal: AbortSignal.timeout(60_000) });
    if (!res.ok) return {};
    const { releases } = (await res.json()) as { releases?: Record<string, { upload_time?: string }[]> };
    return Object.fromEntries(Object.entries(releases ?? {}).flatMap(([v, files]) => (files[0]?.upload_time ? [[v, files[0].upload_time.slice(0, 10)]] : [])));
  } catch {
    return {};
  }
}
