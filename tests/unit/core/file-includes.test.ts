import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileIncludes } from '../../../src/core/file-includes.js';
import { sha256File } from '../../../src/core/hashing.js';
import { SCRATCH_BYTES } from '../../../src/core/scratch-buffers.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('file-scan');
const NEEDLE = '"compact_boundary"';

describe('fileIncludes', () => {
  it('finds the needle anywhere, across the chunk cut too, and only where it is', async () => {
    for (const at of [0, 100, SCRATCH_BYTES - 5, SCRATCH_BYTES - NEEDLE.length, SCRATCH_BYTES, 2 * SCRATCH_BYTES + 7]) {
      const bytes = Buffer.alloc(3 * SCRATCH_BYTES, 0x61);
      bytes.write(NEEDLE, at);
      const path = join(tmp.path, `at-${at}.jsonl`);
      await writeFile(path, bytes);
      expect(await fileIncludes(path, NEEDLE), `needle at ${at}`).toBe(true);
    }
    const without = join(tmp.path, 'without.jsonl');
    await writeFile(without, Buffer.concat([Buffer.alloc(SCRATCH_BYTES - 3, 0x61), Buffer.from(NEEDLE.slice(0, -1))]));
    expect(await fileIncludes(without, NEEDLE)).toBe(false);
    expect(await fileIncludes(join(tmp.path, 'missing.jsonl'), NEEDLE)).toBe(false);
  });
});

describe('sha256File', () => {
  it('hashes files of several scratch buffers, concurrently, as the bytes are', async () => {
    const files = await Promise.all(
      [0, 1, SCRATCH_BYTES, 2 * SCRATCH_BYTES + 3].map(async (n, i) => {
        const bytes = Buffer.alloc(n, i + 1);
        const path = join(tmp.path, `h-${i}.bin`);
        await writeFile(path, bytes);
        return { path, expected: { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: n } };
      }),
    );
    const got = await Promise.all(files.map((f) => sha256File(f.path)));
    expect(got).toEqual(files.map((f) => f.expected));
  });
});
