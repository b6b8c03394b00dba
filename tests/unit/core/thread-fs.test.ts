import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { createStageContext } from '../../../src/core/context.js';
import { ErrorCode, isRollerError } from '../../../src/core/errors.js';
import { createJsonlSink } from '../../../src/core/jsonl-sink.js';
import { SyncFileWritable } from '../../../src/core/output.js';
import { asyncFileOps, syncFileOps, syncFileIo, type FileOps } from '../../../src/core/thread-fs.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('thread-fs');

/** The same sequence of operations through one implementation; what it saw, as plain values. */
async function exercise(ops: FileOps, dir: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: NodeJS.ErrnoException) => e.code);
  await ops.mkdir(join(dir, 'a', 'b'), { recursive: true });
  await ops.writeFile(join(dir, 'a', 'one.txt'), 'héllo');
  await ops.appendFile(join(dir, 'a', 'one.txt'), Buffer.from(' world'));
  seen.push(await ops.readFile(join(dir, 'a', 'one.txt'), 'utf8'));
  seen.push((await ops.readFile(join(dir, 'a', 'one.txt'))).length);
  await ops.copyFile(join(dir, 'a', 'one.txt'), join(dir, 'a', 'b', 'two.txt'));
  await ops.cp(join(dir, 'a'), join(dir, 'c'), { recursive: true });
  seen.push((await ops.readdir(join(dir, 'c'))).sort());
  seen.push((await ops.readdir(join(dir, 'c'), { withFileTypes: true })).map((d) => [d.name, d.isDirectory()]).sort());
  await ops.rename(join(dir, 'c', 'one.txt'), join(dir, 'c', 'three.txt'));
  seen.push((await ops.stat(join(dir, 'c', 'three.txt'))).size);
  const file = await ops.open(join(dir, 'c', 'three.txt'), 'r+');
  const buf = Buffer.alloc(64);
  seen.push((await file.read(buf, 0, 5, 1)).bytesRead, buf.subarray(0, 5).toString());
  seen.push((await file.write(Buffer.from('HE'), 0, 2, 0)).bytesWritten);
  await file.sync();
  seen.push((await file.stat()).size);
  await file.close();
  await file.close(); // twice: harmless in both
  seen.push(await ops.readFile(join(dir, 'c', 'three.txt'), 'utf8'));
  // Failures are rejections with node's codes, never synchronous throws.
  seen.push(await code(ops.readFile(join(dir, 'missing'))));
  seen.push(await code(ops.open(join(dir, 'missing'))));
  seen.push(await code(ops.mkdir(join(dir, 'a'))));
  seen.push(await code(ops.readdir(join(dir, 'missing'))));
  seen.push(await code(ops.open(join(dir, 'c', 'three.txt'), 'wx')));
  await ops.rm(join(dir, 'c'), { recursive: true, force: true });
  seen.push(await code(ops.stat(join(dir, 'c'))));
  return seen;
}

describe('thread-fs', () => {
  it('the synchronous operations (worker threads) do what the asynchronous ones (main thread) do, errors as rejections', async () => {
    const viaAsync = await exercise(asyncFileOps, join(tmp.path, 'async'));
    const viaSync = await exercise(syncFileOps, join(tmp.path, 'sync'));
    expect(viaSync).toEqual(viaAsync);
    expect(viaAsync).toContain('ENOENT');
    expect(viaAsync).toContain('EEXIST');
  });

  it('a test process runs on its main thread: the asynchronous operations', () => {
    expect(syncFileIo).toBe(false);
  });
});

describe('SyncFileWritable', () => {
  it('writes every chunk in order across batches, and only complete once ended', async () => {
    const path = join(tmp.path, 'out.jsonl');
    const out = new SyncFileWritable(path);
    const expected: Buffer[] = [];
    for (let i = 0; i < 5000; i++) {
      const line = Buffer.from(`{"i":${i},"pad":"${'x'.repeat(i % 200)}"}\n`);
      expected.push(line);
      out.write(line);
    }
    out.write(Buffer.alloc(600 << 10, 0x61)); // one chunk past the batch size
    expected.push(Buffer.alloc(600 << 10, 0x61));
    out.end();
    await finished(out);
    expect(readFileSync(path).equals(Buffer.concat(expected))).toBe(true);
  });

  it('truncates an existing file, and a file it cannot open is an error at once', async () => {
    const path = join(tmp.path, 'old.txt');
    writeFileSync(path, 'old content that is longer');
    const out = new SyncFileWritable(path);
    out.end(Buffer.from('new'));
    await finished(out);
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(() => new SyncFileWritable(join(tmp.path, 'no', 'such', 'dir', 'f'))).toThrow(/ENOENT/);
  });
});

describe('SyncFileWritable, live', () => {
  it('what was written is in the file once the event loop turns, before the stream ends', async () => {
    const path = join(tmp.path, 'live.jsonl');
    const out = new SyncFileWritable(path);
    out.write(Buffer.from('{"n":1}\n'));
    await new Promise((r) => setImmediate(r));
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
    out.end();
    await finished(out);
  });
});

describe('SyncFileWritable, failing', () => {
  it('a write the disk refuses (ENOSPC on /dev/full) is the stream\'s error, when full and at the end alike', async () => {
    const big = new SyncFileWritable('/dev/full');
    const bigError = new Promise<Error>((resolve) => big.once('error', resolve));
    big.write(Buffer.alloc(300 << 10, 0x61)); // past the batch size: written at once
    expect((await bigError as NodeJS.ErrnoException).code).toBe('ENOSPC');

    const small = new SyncFileWritable('/dev/full');
    small.end(Buffer.from('one line\n')); // gathered, written by end()
    await expect(finished(small)).rejects.toMatchObject({ code: 'ENOSPC' });
  });

  it('through a JSONL sink: a typed error naming the file, as with a WriteStream', async () => {
    const sink = createJsonlSink({ path: '/dev/full', open: (path) => new SyncFileWritable(path) });
    async function* records() {
      for (let i = 0; i < 10; i++) yield { i };
    }
    await expect(sink.consume(records(), createStageContext())).rejects.toSatisfy((e) => isRollerError(e, ErrorCode.SINK_WRITE_FAILED) && /\/dev\/full/.test((e as Error).message));
  });
});
