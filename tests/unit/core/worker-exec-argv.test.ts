import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { startWorker, workerExecArgv } from '../../../src/core/worker-exec-argv.js';

describe('worker execArgv', () => {
  it('drops main-entry and V8 options, keeps the rest', () => {
    expect(
      workerExecArgv(['--input-type', 'module', '--single-threaded-gc', '--max-old-space-size=4096', '--initial-old-space-size=128', '--max_semi_space_size', '8', '--enable-source-maps', '--expose-gc', '--conditions=dev']),
    ).toEqual(['--enable-source-maps', '--conditions=dev']);
  });

  it('what it keeps, a worker accepts (and what it drops, Node refuses)', async () => {
    const argv = ['--single-threaded-gc', '--max-old-space-size=512', '--enable-source-maps'];
    expect(() => new Worker('0', { eval: true, execArgv: argv })).toThrow(/ERR_WORKER_INVALID_EXEC_ARGV|invalid execArgv/i);
    const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true, execArgv: workerExecArgv(argv) });
    const got = await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    expect(got).toBe(1);
    await w.terminate();
  });

  it('an option outside the list that Node refuses in a worker is dropped as Node names it, the rest kept', async () => {
    const argv = ['--v8-pool-size=2', '--enable-source-maps', '--conditions', 'dev'];
    expect(() => new Worker('0', { eval: true, execArgv: argv })).toThrow(/invalid execArgv flags: --v8-pool-size=2/);
    const w = startWorker('const { parentPort } = require("node:worker_threads"); parentPort.postMessage(process.execArgv)', { eval: true }, argv);
    const got = await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    expect(got).toEqual(['--enable-source-maps', '--conditions', 'dev']);
    await w.terminate();
  });
});
