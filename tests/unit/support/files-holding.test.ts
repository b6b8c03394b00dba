import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesHolding } from '../../support/files-holding.js';
import { useTempDir } from '../../support/temp-dir.js';

describe('filesHolding (the secret scan the key-custody test runs over /tmp)', () => {
  const tmp = useTempDir('files-holding');

  it('finds a needle across a 1 MB read boundary and in nested directories; follows no link; a missing root is none', () => {
    const needle = 'canary-0123456789abcdef';
    const straddling = Buffer.alloc((1 << 20) + 64, 'x');
    straddling.write(needle, (1 << 20) - 5);
    writeFileSync(join(tmp.path, 'straddling.bin'), straddling);
    mkdirSync(join(tmp.path, 'a', 'b'), { recursive: true });
    writeFileSync(join(tmp.path, 'a', 'b', 'end.txt'), `prefix ${needle}`);
    writeFileSync(join(tmp.path, 'a', 'clean.txt'), needle.slice(0, -1));
    const outside = join(tmp.path, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'held.txt'), needle);
    symlinkSync(outside, join(tmp.path, 'a', 'link'));
    expect(filesHolding(needle, [join(tmp.path, 'a'), join(tmp.path, 'straddling.bin'), join(tmp.path, 'missing')]).sort()).toEqual([
      join(tmp.path, 'a', 'b', 'end.txt'),
      join(tmp.path, 'straddling.bin'),
    ]);
  });
});
