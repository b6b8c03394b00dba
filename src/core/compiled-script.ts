import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ErrorCode, RollerError } from './errors.js';

/**
 * The compiled script `file` beside the module at `moduleUrl`: a worker thread or child process runs JavaScript, so
 * from the TypeScript sources (tests) it is the build's copy under dist/.
 */
export function compiledScript(moduleUrl: string, file: string): string {
  const here = fileURLToPath(moduleUrl);
  const sibling = here.replace(/[^\\/]+$/, file);
  if (here.endsWith('.js')) return sibling;
  const built = sibling.replace(/([\\/])src([\\/])(?!.*[\\/]src[\\/])/, '$1dist$1src$2');
  if (!existsSync(built)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${built} is missing: run \`npm run build\` (roller's workers and child processes run compiled code)`);
  return built;
}
