import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkTree, moveTree, refuseLinksInTree } from '../../../src/pipelines/scale/link-tree.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('link-tree');

describe('placing a sample', () => {
  it('links every file (the same inode), keeps modes; a symbolic link (a reader would follow it out) is refused by name', async () => {
    const src = join(tmp.path, 'a');
    mkdirSync(join(src, 'raw', 'native'), { recursive: true });
    writeFileSync(join(src, 'info.json'), '{}');
    writeFileSync(join(src, 'raw', 'native', 's.jsonl'), 'x\n', { mode: 0o600 });
    const dst = join(tmp.path, 'b', 'samples', 'm', '0000_t');
    expect(await linkTree(src, dst)).toEqual({ linked: 2, copied: 0, moved: 0 });
    expect(statSync(join(dst, 'info.json')).ino).toBe(statSync(join(src, 'info.json')).ino);
    expect(statSync(join(dst, 'raw', 'native', 's.jsonl')).mode & 0o777).toBe(0o600);
    await expect(linkTree(src, dst)).rejects.toThrow(/EEXIST/); // never over a sample already there
    symlinkSync('/etc/passwd', join(src, 'raw', 'outside'));
    await expect(refuseLinksInTree(src)).rejects.toThrow(`${join(src, 'raw', 'outside')}: a symbolic link (to /etc/passwd)`);
    await expect(linkTree(src, join(tmp.path, 'c'))).rejects.toThrow(`${join(src, 'raw', 'outside')}: a symbolic link (to /etc/passwd)`);
    expect(readlinkSync(join(src, 'raw', 'outside'))).toBe('/etc/passwd'); // the part as it was
  });

  it('refuses what a sample never holds (a FIFO), by name; --move renames the directory', async () => {
    const src = join(tmp.path, 'fifo');
    mkdirSync(src);
    execFileSync('mkfifo', [join(src, 'pipe')]);
    await expect(linkTree(src, join(tmp.path, 'fifo-out'))).rejects.toThrow(/pipe: neither a file nor a directory/);
    const moving = join(tmp.path, 'm');
    mkdirSync(moving);
    writeFileSync(join(moving, 'info.json'), '{}');
    expect(await moveTree(moving, join(tmp.path, 'moved', 'x'))).toEqual({ linked: 0, copied: 0, moved: 1 });
    expect(existsSync(moving)).toBe(false);
    expect(existsSync(join(tmp.path, 'moved', 'x', 'info.json'))).toBe(true);
  });
});
