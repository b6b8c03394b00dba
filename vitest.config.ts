import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The CLI tests spawn bin/roller, which runs the compiled dist/; `npm test` builds first.
    pool: 'forks',
    // Two files at once (vitest's default on 2 CPUs is one): the long e2e files each start their own engines on free
    // ports and temp dirs (dockerd, Slurm, Redis, scripted models), so none shares one with another.
    maxWorkers: 2,
    // Nothing the suite started (a private dockerd, its mounts, a proxy relay) may outlive it.
    globalSetup: ['tests/support/leftovers-check.ts'],
  },
});
