import { link, mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdirInside, refuseLinksBelow, writeFileInside } from '../../../src/core/inside-root.js';
import { copyResults } from '../../../src/pipelines/collect/results.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('inside-root');

describe('inside an attempt, no link is followed (real files)', () => {
  it('a file made a link (or a hard link) to a file outside is replaced, the outside file untouched', async () => {
    const home = join(tmp.path, 'home1');
    await mkdir(home);
    const outside = join(tmp.path, 'outside1.txt');
    await writeFile(outside, 'untouched');
    await symlink(outside, join(home, '.roller-prompt.txt'));
    await writeFileInside(home, join(home, '.roller-prompt.txt'), 'the prompt');
    await link(outside, join(home, 'config.toml'));
    await writeFileInside(home, join(home, 'config.toml'), 'model = "x"');
    expect(await readFile(outside, 'utf8')).toBe('untouched');
    expect(await readFile(join(home, '.roller-prompt.txt'), 'utf8')).toBe('the prompt');
    expect(await readFile(join(home, 'config.toml'), 'utf8')).toBe('model = "x"');
  });

  it('a directory on the way that is a link is refused, naming it; nothing is made outside', async () => {
    const home = join(tmp.path, 'home2');
    const elsewhere = join(tmp.path, 'elsewhere');
    await mkdir(home);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(home, '.codex'));
    await expect(writeFileInside(home, join(home, '.codex', 'sub', 'config.toml'), 'x')).rejects.toMatchObject({ code: 'ROLLER_LINK_REFUSED', message: expect.stringContaining('.codex') });
    await expect(mkdirInside(home, join(home, '.codex', 'deeper'))).rejects.toMatchObject({ code: 'ROLLER_LINK_REFUSED' });
    await expect(refuseLinksBelow(home, join(home, '.codex', 'projects'), "the harness's session directory")).rejects.toMatchObject({ code: 'ROLLER_LINK_REFUSED' });
    await expect(refuseLinksBelow(home, join(home, '.claude', 'projects'), 'x')).resolves.toBeUndefined(); // absent is fine
  });

  it('results/: a hard link to a file outside, a sparse file and files past the limit are refused and named; the rest copied', async () => {
    const work = join(tmp.path, 'work');
    await mkdir(join(work, 'out'), { recursive: true });
    const outside = join(tmp.path, 'outside-secret.txt');
    await writeFile(outside, 'secret outside the work dir');
    await link(outside, join(work, 'out', 'hard.txt'));
    await writeFile(join(work, 'out', 'sparse.bin'), '');
    await truncate(join(work, 'out', 'sparse.bin'), 1 << 30); // 1 GiB of hole
    await writeFile(join(work, 'out', 'a.txt'), 'a'.repeat(600));
    await writeFile(join(work, 'out', 'b.txt'), 'b'.repeat(600));
    const copied = await copyResults(work, ['out'], join(tmp.path, 'results'), 1000);
    expect(copied.files.map((f) => f.path)).toEqual(['out/a.txt']);
    expect(copied.refused).toEqual([
      expect.stringMatching(/^out\/b\.txt: over the results limit/),
      expect.stringMatching(/^out\/hard\.txt: a hard link/),
      expect.stringMatching(/^out\/sparse\.bin: a sparse file/),
    ]);
  });
});
