import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isRollerError, sha256File, writeFileAtomic, writeJsonAtomic } from '../../../src/core/index.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('atomic');

describe('atomic writes', () => {
  it('writes the document, and the sha256 computed while writing equals the file hash', async () => {
    const path = join(tmp.path, 'nested', 'info.json');
    const written = await writeJsonAtomic(path, { state: 'running', n: 1 });
    const bytes = await readFile(path);
    expect(JSON.parse(bytes.toString())).toEqual({ state: 'running', n: 1 });
    expect(written.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(written.bytes).toBe(bytes.length);
    expect(await sha256File(path)).toEqual({ sha256: written.sha256, bytes: written.bytes });
  });

  it('streams sections, and a failure midway leaves the previous version and no temp file', async () => {
    const path = join(tmp.path, 'doc.json');
    await writeFile(path, '{"version":1}\n');
    async function* sections() {
      yield '{"version":';
      throw new Error('serializer failed');
    }
    await expect(writeFileAtomic(path, sections())).rejects.toSatisfy((e) => isRollerError(e, ErrorCode.ATOMIC_WRITE_FAILED));
    expect(await readFile(path, 'utf8')).toBe('{"version":1}\n');
    expect((await readdir(tmp.path)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('an aborted write keeps the old file', async () => {
    const path = join(tmp.path, 'aborted.json');
    await writeFile(path, 'old');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(writeFileAtomic(path, ['a', 'b'], { signal: controller.signal })).rejects.toThrow('stop');
    expect(await readFile(path, 'utf8')).toBe('old');
  });
});
