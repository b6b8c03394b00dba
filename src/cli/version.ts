import { readFileSync } from 'node:fs';

/** roller's own version, from its package.json (recorded in every run's lock and info). */
export const rollerVersion = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
