/**
 * What appending to a growing file costs on this machine, through the page cache and with direct I/O (O_DIRECT): the
 * wire log's choice (src/sources/proxy/wire-log.ts). Each run appends the same bytes in 512 KB writes to a new file,
 * alternating the two ways, and prints kernel CPU per KB and MB/s. A fresh page-cache page is a page the VM may have
 * handed back to its host, so the buffered figure depends on what the machine did before (pages of a file deleted a
 * moment ago come back cheap; that is why every file is kept to the end).
 *
 *   npm run build && node dist/bench/proxy/write-cost.js [--mb 200] [--runs 3]
 */
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { alignedBuffer } from '../../src/sources/proxy/direct-io.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const MB = arg('--mb', 200);
const RUNS = arg('--runs', 3);
// Under the repository (a real disk), not /tmp, which may be a tmpfs elsewhere.
const dir = mkdtempSync(join(process.cwd(), '.write-cost-'));
const chunk = alignedBuffer(512 << 10).fill(97);

function append(direct: boolean, run: number): { kernelUsPerKb: number; mbPerS: number } {
  // Files are kept until the end, as a capture keeps its growing log: a buffered run cannot reuse the page-cache pages
  // of the one before.
  const path = join(dir, `${direct ? 'direct' : 'buffered'}-${run}`);
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (direct ? constants.O_DIRECT : 0));
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let position = 0;
  for (let i = 0; i < MB * 2; i++) position += writeSync(fd, chunk, 0, chunk.length, position);
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  closeSync(fd);
  return { kernelUsPerKb: used.system / (MB * 1024), mbPerS: MB / seconds };
}

try {
  for (let run = 0; run < RUNS; run++) {
    for (const direct of [false, true]) {
      const r = append(direct, run);
      console.log(`${direct ? 'O_DIRECT ' : 'buffered '} ${MB} MB: ${r.kernelUsPerKb.toFixed(3)} us kernel per KB, ${r.mbPerS.toFixed(0)} MB/s`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
