import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { defaultCacheDir } from '../../src/harnesses/cache-dir.js';
import { findPython } from '../../src/harnesses/pypi-installer.js';
import { repoRoot } from './paths.js';

const run = promisify(execFile);
const REQUIREMENTS = join(repoRoot, 'tests', 'python', 'requirements.txt');

/**
 * A venv holding the readers users load roller's exports with (tests/python/requirements.txt, pinned), made once per
 * requirements digest beside roller's harness cache; its python.
 */
export async function pythonReaders(): Promise<string> {
  const digest = createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex').slice(0, 12);
  const venv = join(dirname(defaultCacheDir()), `python-readers-${digest}`);
  const python = join(venv, 'bin', 'python');
  if (existsSync(join(venv, '.installed'))) return python;
  const base = await findPython({ min: '3.10', below: '3.15' }, 'the export readers (datasets, pyarrow)');
  await run(base.path, ['-m', 'venv', venv], { timeout: 5 * 60_000 });
  await run(python, ['-m', 'pip', 'install', '--no-input', '--disable-pip-version-check', '--quiet', '-r', REQUIREMENTS], { timeout: 20 * 60_000, maxBuffer: 16 << 20 });
  writeFileSync(join(venv, '.installed'), `${base.version}\n`);
  return python;
}

/** What tests/python/read_exports.py found reading a run's hf and parquet exports. */
export async function readExports(python: string, runDir: string, hf: string, parquet: string): Promise<Record<string, any>> {
  const { stdout } = await run(python, [join(repoRoot, 'tests', 'python', 'read_exports.py'), runDir, hf, parquet], { timeout: 10 * 60_000, maxBuffer: 64 << 20, env: { ...process.env, HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1', HF_HOME: join(dirname(python), '..', 'hf-home') } });
  return JSON.parse(stdout) as Record<string, any>;
}
