import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where installed harness CLIs are kept (each adapter's runner.pin names its package and exact version). */
export function defaultCacheDir(): string {
  if (process.env.ROLLER_CACHE_DIR) return process.env.ROLLER_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'roller', 'harnesses');
}
