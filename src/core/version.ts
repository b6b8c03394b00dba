import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest package.json above this module: the package's own (src/core in a checkout, dist/src/core when built). */
function ownPackageJson(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'package.json');
    if (dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  }
}

/** roller's own version, from its package.json (recorded in every run's lock and info). */
export const rollerVersion = (JSON.parse(readFileSync(ownPackageJson(), 'utf8')) as { version: string }).version;
