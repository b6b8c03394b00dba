import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** ../shared next to the checkout (CI lays a copy beside the clone). */
export const sharedDir = join(repoRoot, '..', 'shared');
export const atifFixture = join(repoRoot, 'tests/fixtures/atif/rfc0001-v1.7-example-financial.trajectory.json');
export const rollerBin = join(repoRoot, 'bin', 'roller');
