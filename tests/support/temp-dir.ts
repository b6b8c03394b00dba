import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A fresh temporary directory for the test file, removed afterwards. Read `.path` inside tests. */
export function useTempDir(prefix: string): { readonly path: string } {
  const holder = { path: '' };
  beforeAll(async () => {
    holder.path = await mkdtemp(join(tmpdir(), `roller-${prefix}-`));
  });
  afterAll(async () => rm(holder.path, { recursive: true, force: true }));
  return holder;
}
