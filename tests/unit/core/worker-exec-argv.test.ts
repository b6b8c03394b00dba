import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { startWorker, workerExecArgv } from '../../../src/core/worker-exec-argv.js';

describe('worker execArgv', () => {
  it('drops main-entry and V8 options, keeps the rest', () => {
    expect(
      workerExecArgv(['--input-type', 'module', '--single-threaded-gc', '--max-old-space-size=4096', '--initial-old-space-size=128', '--no-memory-reducer', '--max_semi_space_size', '8', '--enable-source-maps', '--expose-gc', '--conditions=dev']),
    ).toEqual(['--enable-source-maps', '--conditions=dev']);
  });

  it('what it keeps, a worker accepts (and what it drops, Node refuses)', async () => {
    const argv = ['--single-threaded-gc', '--max-old-space-size=512', '--no-memory-reducer', '--enable-source-maps'];
    expect(() => new Worker('0', { eval: true, execArgv: argv })).toThrow(/ERR_WORKER_INVALID_EXEC_ARGV|invalid execArgv/i);
    const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true, execArgv: workerExecArgv(argv) });
    const got = await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    expect(got).toBe(1);
    await w.terminate();
  });

  it("a worker started by startWorker keeps V8's default heap sizing when node runs with bin/roller's --initial-old-space-size", () => {
    // Counted by what it changes: a worker that makes old-generation garbage runs full collections with V8's default
    // sizing and none with a 128 MB start. A plain Worker inherits the option (the process-wide flag); startWorker's
    // does not. Compiled code: a child process cannot load the TypeScript sources.
    const lib = pathToFileURL(join(__dirname, '../../../dist/src/core/worker-exec-argv.js')).href;
    const workerSource = `
      const { parentPort } = require('node:worker_threads');
      const { PerformanceObserver, constants } = require('node:perf_hooks');
      let majors = 0;
      new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
      const keep = [];
      for (let round = 0; round < 40; round++) {
        const batch = [];
        for (let i = 0; i < 20000; i++) batch.push({ i, s: 'x' + i, a: [i, i] });
        keep.push(batch);
        if (keep.length > 3) keep.shift();
      }
      setTimeout(() => parentPort.postMessage(majors), 50);`;
    const main = `
      import { Worker } from 'node:worker_threads';
      import { startWorker } from ${JSON.stringify(lib)};
      const src = ${JSON.stringify(workerSource)};
      const majors = (w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
      const plain = await majors(new Worker(src, { eval: true, execArgv: [] })); // V8 options are process-wide all the same
      const started = await majors(startWorker(src, { eval: true }));
      console.log(JSON.stringify({ plain, started }));`;
    const res = spawnSync(process.execPath, ['--initial-old-space-size=128', '--input-type=module', '-e', main], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    const { plain, started } = JSON.parse(res.stdout) as { plain: number; started: number };
    expect(plain).toBe(0);
    expect(started).toBeGreaterThan(0);
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
