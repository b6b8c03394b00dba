/**
 * What this machine gives a second thread, beside bench/reprocess's parse and memory-copy ceilings:
 *
 *   node dist/bench/reprocess/machine.js
 *
 * - dependent loads (a random cyclic walk) over N MB per thread, one thread and two at once: where the working set
 *   leaves the cache, and how far two threads slow each other there (a reprocess worker's working set — its young
 *   generation, read arena and heap — is tens of MB);
 * - arithmetic alone in one and two threads: whether the two vCPUs are two cores at all;
 * - writing 1 GB to a new file: with the pages just freed by the kernel, and again after a pause, when a VM that
 *   hands freed memory back to its host (virtio-balloon free page reporting) must get them back first — a reprocess
 *   writes ~1.2 x its input as new files.
 * Printed, not asserted: it describes the machine, not roller.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

type Job = { kind: 'chase'; mb: number; steps: number } | { kind: 'alu'; steps: number };

/** A random single cycle over n slots (Sattolo): every load depends on the one before, so prefetching cannot help. */
function cycle(n: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * i);
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}

/** Prepares the job, answers 'ready', runs it on 'go' and answers its milliseconds (so setup is never timed). */
function serve(job: Job): void {
  const walk = job.kind === 'chase' ? cycle((job.mb * 2 ** 20) >> 2) : null;
  let p = 0;
  if (walk) for (let i = 0; i < walk.length; i++) p = walk[p]!; // warm: every page touched once
  parentPort!.postMessage('ready');
  parentPort!.once('message', () => {
    const t = performance.now();
    if (walk) for (let i = 0; i < job.steps; i++) p = walk[p]!;
    else for (let i = 0; i < job.steps; i++) p = (p * 1103515245 + 12345) | 0;
    parentPort!.postMessage({ ms: performance.now() - t, p });
  });
}

/** The job in `threads` workers started together; the slowest one's milliseconds. */
async function timed(job: Job, threads: number): Promise<number> {
  const workers = Array.from({ length: threads }, () => new Worker(new URL(import.meta.url), { workerData: job }));
  try {
    await Promise.all(workers.map((w) => new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    })));
    const answers = await Promise.all(workers.map((w) => new Promise<{ ms: number }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
      w.postMessage('go');
    })));
    return Math.max(...answers.map((a) => a.ms));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Kernel milliseconds of writing `mb` MB to a new file in 1 MB writes. */
function writeNewFile(path: string, mb: number): number {
  const chunk = Buffer.alloc(1 << 20, 120);
  const before = process.cpuUsage();
  const fd = openSync(path, 'w');
  try {
    for (let i = 0; i < mb; i++) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
  return process.cpuUsage(before).system / 1000;
}

async function main(): Promise<void> {
  const steps = 30_000_000;
  for (const mb of [0.5, 2, 8, 32, 128]) {
    const one = await timed({ kind: 'chase', mb, steps }, 1);
    const two = await timed({ kind: 'chase', mb, steps }, 2);
    const ns = (ms: number) => ((ms / steps) * 1e6).toFixed(1);
    process.stdout.write(`dependent loads over ${String(mb).padStart(5)} MB per thread: ${ns(one)} ns each in 1 thread, ${ns(two)} in 2 at once = ${((2 * one) / two).toFixed(2)} x\n`);
  }
  const alu = { kind: 'alu', steps: 1_000_000_000 } as const;
  const one = await timed(alu, 1);
  const two = await timed(alu, 2);
  process.stdout.write(`arithmetic only: 2 threads at once = ${((2 * one) / two).toFixed(2)} x one\n`);

  const dir = mkdtempSync(join(tmpdir(), 'roller-machine-'));
  try {
    const file = join(dir, 'new');
    writeNewFile(file, 1024);
    rmSync(file);
    const warm = writeNewFile(file, 1024);
    rmSync(file);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const later = writeNewFile(file, 1024);
    process.stdout.write(`writing 1 GB to a new file: ${warm.toFixed(0)} ms of kernel time with pages just freed, ${later.toFixed(0)} ms 10 s after they were freed\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread) await main();
else serve(workerData as Job);
