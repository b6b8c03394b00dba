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

describe('atomic writes of large and mixed content', () => {
  it('strings and byte pieces beyond the 1 MB scratch buffer, a surrogate pair across its edge: the bytes of Buffer.from of each', async () => {
    const pieces: (string | Uint8Array)[] = [
      'a'.repeat((1 << 20) - 1) + '😀' + 'é…',
      Buffer.from('bytes\n'),
      Buffer.alloc((1 << 20) + 5, 0x62),
      '\ud800 lone surrogate',
      `${'…'.repeat(700_000)}\n`,
    ];
    const expected = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
    const path = join(tmp.path, 'big.bin');
    const written = await writeFileAtomic(path, pieces);
    expect((await readFile(path)).equals(expected)).toBe(true);
    expect(written).toEqual({ path, bytes: expected.length, sha256: createHash('sha256').update(expected).digest('hex') });
  });

  it('concurrent JSON documents each get their own bytes', async () => {
    const docs = Array.from({ length: 6 }, (_, i) => ({ i, steps: Array.from({ length: 3000 }, (_, j) => ({ j, text: `doc ${i} … ${'x'.repeat(j % 300)}` })) }));
    await Promise.all(docs.map((d, i) => writeJsonAtomic(join(tmp.path, `doc-${i}.json`), d)));
    for (const [i, d] of docs.entries()) expect(await readFile(join(tmp.path, `doc-${i}.json`), 'utf8')).toBe(`${JSON.stringify(d, null, 2)}\n`);
  });
});

describe('atomic JSON documents', () => {
  it('are the value as it was at the call, even if the caller changes it while the write is in flight', async () => {
    const path = join(tmp.path, 'snapshot.json');
    const value = { state: 'running', rows: [{ status: 'ok' }] };
    const writing = writeJsonAtomic(path, value);
    value.state = 'done';
    value.rows[0]!.status = 'changed';
    value.rows.push({ status: 'late' });
    await writing;
    expect(await readFile(path, 'utf8')).toBe(`${JSON.stringify({ state: 'running', rows: [{ status: 'ok' }] }, null, 2)}\n`);
  });

  it('a document of several scratch buffers, characters beyond Latin-1 throughout: the bytes of JSON.stringify', async () => {
    const doc = { steps: Array.from({ length: 20_000 }, (_, i) => ({ i, text: `…${'é😀'.repeat(i % 40)} step ${i}` })) };
    const path = join(tmp.path, 'large.json');
    const written = await writeJsonAtomic(path, doc, { durable: false });
    const expected = Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);
    expect(expected.length).toBeGreaterThan(3 << 20);
    expect((await readFile(path)).equals(expected)).toBe(true);
    expect(written.sha256).toBe(createHash('sha256').update(expected).digest('hex'));
  });
});
