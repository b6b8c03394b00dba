/**
 * `roller view` on big runs (issue 52), measured in Debian's Chromium (playwright-core):
 *  1. a run of 10,000 samples (the README demo's three real Claude Code samples, copied round-robin, big files
 *     hard-linked): the run page, and the same page sorted by tokens once every sample's info.json is read;
 *  2. a sample of 2,000 calls with 64 KB and with 1 MB request bodies (the demo's delegation calls, repeated with new
 *     ids and padded) and a trace_ACTF.json of 2,000 steps as big: its sample page (the calls index built on first
 *     open), a call page, the trajectory page at its first steps and at its last (read as a token stream up to them).
 * For each page, from navigation start: first contentful paint, the page's content shown (app.js's data-first-at: on
 * the sample page the tree, before the calls index), and everything rendered (data-ready-at) — targets <= 1 s — and
 * the server's peak RSS (target <= 200 MB).
 *
 *   npm run bench:view
 *   npm run bench:view -- --samples 10000 --calls 2000 --body-kb 64,1024
 */
/// <reference lib="dom" />
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { chromium } from 'playwright-core';
import type { SampleInfo } from '../../src/schemas/run-info.js';
import { demoRun, linkTree, replicateRun, repoRoot as root } from '../support/synthetic-run.js';

const bin = join(root, 'bin', 'roller');
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const nSamples = Number(arg('--samples', '10000'));
const nCalls = Number(arg('--calls', '2000'));
const bodyKbs = arg('--body-kb', '64,1024').split(',').map(Number);
const chromiumPath = arg('--chromium', '/usr/bin/chromium');
const work = mkdtempSync(join(tmpdir(), 'roller-bench-view-'));

async function main(): Promise<void> {
  const t0 = performance.now();
  const demo = await demoRun(work);
  const demoRunDir = demo.dir;
  const info = demo.info;
  console.log(`demo run collected in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // 1. N samples.
  const big = join(work, 'big');
  replicateRun(demo, big, nSamples);

  // 2. Samples of M calls with padded bodies: the delegate sample's calls repeated, one participant each in turn.
  const deleg = info.samples.find((s) => s.task_id === 'delegate')!;
  const sampleInfo = JSON.parse(readFileSync(join(demoRunDir, deleg.path, 'info.json'), 'utf8')) as SampleInfo;
  const source = readFileSync(join(demoRunDir, deleg.path, sampleInfo.runtime.capture!.path, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
  const longRuns: string[] = [];
  for (const kb of bodyKbs) {
    const longRun = join(work, `long-${kb}kb`);
    const longPath = 'samples/scripted_default/0000_delegate';
    linkTree(join(demoRunDir, deleg.path), join(longRun, longPath));
    writeFileSync(join(longRun, longPath, 'info.json'), JSON.stringify({ ...sampleInfo, index: 0 }));
    writeFileSync(join(longRun, 'info.json'), JSON.stringify({ ...info, run_name: 'long', samples: [{ ...deleg, index: 0, path: longPath }] }));
    const capture = join(longRun, longPath, sampleInfo.runtime.capture!.path);
    rmSync(join(capture, 'calls.jsonl'));
    const fd = openSync(join(capture, 'calls.jsonl'), 'w');
    const pad = 'x'.repeat(kb * 1024);
    const start = Date.parse(source[0]!.started_at);
    for (let i = 0; i < nCalls; i++) {
      const c = source[i % source.length]!;
      const at = (ms: number) => new Date(start + i * 50 + ms).toISOString();
      const context = { ...c.context, metadata: { ...(c.context.metadata ?? {}), bench_padding: pad } };
      writeSync(fd, `${JSON.stringify({ ...c, call_id: `c-bench-${String(i).padStart(6, '0')}`, seq: i, started_at: at(0), first_byte_at: at(5), ended_at: at(40), context })}\n`);
    }
    closeSync(fd);
    // Its trace_ACTF.json as long as the calls: a step per call, each with the body's padding as a tool result.
    const actfPath = join(longRun, longPath, sampleInfo.trajectory.actf!);
    const actf = JSON.parse(readFileSync(actfPath, 'utf8')) as { steps: Record<string, any>[] } & Record<string, unknown>;
    rmSync(actfPath);
    const { steps, ...actfHead } = actf;
    const head = JSON.stringify(actfHead);
    const afd = openSync(actfPath, 'w');
    writeSync(afd, `${head.slice(0, -1)},"steps":[`);
    for (let i = 0; i < nCalls; i++) {
      const step = steps[i % steps.length]!;
      writeSync(afd, `${i ? ',' : ''}${JSON.stringify({ ...step, step_id: i + 1, observation: [{ toolCallId: `bench-${i}`, content: pad, isError: false }] })}`);
    }
    writeSync(afd, ']}');
    closeSync(afd);
    console.log(`a sample of ${nCalls} calls: ${(statSync(join(capture, 'calls.jsonl')).size / 1e9).toFixed(2)} GB calls.jsonl, ${(statSync(actfPath).size / 1e9).toFixed(2)} GB trace_ACTF.json (${relative(work, longRun)})`);
    longRuns.push(longRun);
  }
  console.log(`synthetic: ${nSamples} samples (${relative(work, big)})`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'], headless: true });
  const results: string[] = [];
  const pass = (ok: boolean) => (ok ? 'PASS' : 'MISS');
  const plan: [string, string[]][] = [[big, ['#/', '#/?sort=tokens&desc=1', `#/sample/${nSamples - 1}`]], ...longRuns.map((r): [string, string[]] => [r, ['#/sample/0', '#/sample/0?again', `#/sample/0/call/c-bench-${String(nCalls - 1).padStart(6, '0')}`, '#/sample/0/trajectory', `#/sample/0/trajectory?a=${Math.max(0, nCalls - 50)}`]])];
  for (const [run, pages] of plan) {
    const child = spawn(bin, ['view', run], { stdio: ['ignore', 'pipe', 'inherit'] });
    const url = (await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())))).replace(/#.*$/, '');
    let peakKb = 0;
    const timer = setInterval(() => {
      try {
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0));
      } catch {
        // ended
      }
    }, 50);
    for (const route of pages) {
      if (route === '#/?sort=tokens&desc=1') {
        // every sample's info.json read: the columns the page sorts by are known
        const t = performance.now();
        for (;;) {
          const page = (await (await fetch(`${url}api/samples?limit=1`)).json()) as { indexed: number; total: number };
          if (page.indexed === page.total) break;
          await new Promise((r2) => setTimeout(r2, 100));
        }
        results.push(`  the server read ${nSamples} samples' info.json in ${((performance.now() - t) / 1000).toFixed(1)} s after its first page (in the background)`);
      }
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${url}${route}`);
      await page.waitForFunction(() => document.body.dataset.ready, undefined, { timeout: 120_000 });
      const m = await page.evaluate(() => ({
        fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
        first: Number(document.body.dataset.firstAt),
        ready: Number(document.body.dataset.readyAt),
      }));
      results.push(`  ${relative(work, run).padEnd(11)} ${route.padEnd(32)} first paint ${m.fcp.toFixed(0).padStart(5)} ms · content ${m.first.toFixed(0).padStart(5)} ms  ${pass(m.first <= 1000)} · all rendered ${m.ready.toFixed(0).padStart(5)} ms  ${pass(m.ready <= 1000)}`);
      await page.close();
    }
    clearInterval(timer);
    child.kill('SIGINT');
    results.push(`  server peak RSS ${(peakKb / 1024).toFixed(0)} MB  ${pass(peakKb / 1024 <= 200)} (<= 200 MB)`);
  }
  await browser.close();
  console.log(results.join('\n'));
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}

await main();
