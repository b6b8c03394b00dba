import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The CLI tests spawn bin/roller, which runs the compiled dist/; `npm test` builds first.
    pool: 'forks',
    // Nothing the suite started (a private dockerd, its mounts, a proxy relay) may outlive it.
    globalSetup: ['tests/support/leftovers-check.ts'],
  },
});
