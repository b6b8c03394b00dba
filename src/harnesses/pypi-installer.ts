import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, RollerError } from '../core/errors.js';

const run = promisify(execFile);

/** Pythons tried in order: ROLLER_PYTHON, then versioned names before the bare one (a machine's python3 may be old). */
const CANDIDATES = ['python3.13', 'python3.12', 'python3.11', 'python3'];

interface FoundPython {
  path: string;
  version: string;
}

const versionOf = (v: string): number[] => v.split('.').map(Number);
const atLeast = (v: string, min: string): boolean => {
  const [a, b] = [versionOf(v), versionOf(min)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** A Python on this machine whose version is in [min, below) and that can make a venv, or an error naming what was found. */
export async function findPython(range: { min: string; below: string }, what: string): Promise<FoundPython> {
  const tried: string[] = [];
  for (const name of [...(process.env.ROLLER_PYTHON ? [process.env.ROLLER_PYTHON] : []), ...CANDIDATES]) {
    const probe = await run(name, ['-c', 'import sys, venv, ensurepip; print(sys.executable); print("%d.%d.%d" % sys.version_info[:3])'], { timeout: 30_000 }).catch((err: NodeJS.ErrnoException & { stderr?: string }) => err);
    if (probe instanceof Error) {
      if (probe.code !== 'ENOENT') tried.push(`${name}: ${/No module named '?(venv|ensurepip)/.test(probe.stderr ?? '') ? 'no venv/ensurepip module (Debian: apt-get install python3-venv)' : (probe.stderr ?? probe.message).trim().split('\n').pop()}`);
      continue;
    }
    const [path, version] = probe.stdout.trim().split('\n');
    if (atLeast(version!, range.min) && !atLeast(version!, range.below)) return { path: path!, version: version! };
    tried.push(`${name}: ${version}`);
  }
  throw new RollerError(
    ErrorCode.HARNESS_INSTALL_FAILED,
    `${what} needs Python >= ${range.min} and < ${range.below} with its venv module; ${tried.length > 0 ? `found ${tried.join('; ')}` : 'no python3 on PATH'}. Install one (Debian: apt-get install python3 python3-venv), or name it with ROLLER_PYTHON=/path/to/python3`,
  );
}

/**
 * `package==version` and its dependencies into a virtual environment at `<dir>/venv`, on a Python in range. pip's
 * install report gives each distribution's sha256, kept as `<dir>/requirements.lock` (pip's --require-hashes format):
 * what was installed, checkable later. The venv runs offline afterwards.
 */
export async function installFromPypi(pin: { package: string; version: string; python: { min: string; below: string } }, dir: string): Promise<{ python: string; lock: string }> {
  const python = await findPython(pin.python, `${pin.package} ${pin.version}`);
  const venv = join(dir, 'venv');
  await run(python.path, ['-m', 'venv', venv], { timeout: 5 * 60_000 });
  const report = join(dir, 'pip-report.json');
  try {
    await run(join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--no-input', '--disable-pip-version-check', '--quiet', '--report', report, `${pin.package}==${pin.version}`], {
      timeout: 20 * 60_000,
      maxBuffer: 16 << 20,
      env: { ...process.env, PIP_NO_CACHE_DIR: '1' },
    });
  } catch (cause) {
    const said = String((cause as { stderr?: unknown }).stderr ?? '').trim().split('\n').filter((l) => /ERROR|error:/i.test(l)).slice(0, 3).join('; ');
    throw new RollerError(ErrorCode.HARNESS_INSTALL_FAILED, `pip could not install ${pin.package}==${pin.version} on Python ${python.version} (${said || (cause as Error).message.split('\n')[0]}); check that PyPI is reachable (pip index versions ${pin.package})`, { cause });
  }
  const installed = (JSON.parse(await readFile(report, 'utf8')) as { install?: { metadata?: { name?: string; version?: string }; download_info?: { archive_info?: { hashes?: Record<string, string> } } }[] }).install ?? [];
  const lines = installed
    .map((i) => {
      const sha = i.download_info?.archive_info?.hashes?.sha256;
      return `${i.metadata?.name}==${i.metadata?.version}${sha ? ` --hash=sha256:${sha}` : ''}`;
    })
    .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  const lock = join(dir, 'requirements.lock');
  await writeFile(lock, `# ${pin.package}==${pin.version} on Python ${python.version}, as pip installed it (${installed.length} distributions)\n${lines.join('\n')}\n`);
  return { python: python.version, lock };
}
