/**
 * What recording costs the forwarding thread, without the network: exchanges shaped like the proxy bench's (agent
 * sessions whose ~22 KB bodies grow by a turn; an 8 KB SSE response) appended to a WireLogWriter as the proxy appends
 * them — request (delta-encoded), response head, body, end — with the header splitting and metas the proxy builds.
 *
 * 1. Against the limit measured in the same run: the same request and response bytes merely copied into buffers and
 *    written with one writev per 512 KB (CPU of all threads, user and kernel).
 * 2. By part, on the main thread alone (the thread that forwards; /proc's per-thread counters where there are): the
 *    exchange's own bookkeeping without any append (headers split, metas built), + the three metas and their frames
 *    (no bodies), + everything. 200,000 exchanges per part, each part after an unmeasured pass, parts alternated.
 *
 *   npm run build && node dist/bench/proxy/wire-log-cost.js
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { splitRequestHeaders, splitResponseHead } from '../../src/sources/proxy/headers.js';
import { WireLogWriter, type RequestMeta } from '../../src/sources/proxy/wire-log.js';
import { sessionBodies, TURNS } from './session-bodies.js';
import { mainThreadCpuMs } from './thread-cpu.js';

const N = 20_000;
const N_PARTS = 200_000;
const SESSIONS = 16;
const bodies = Array.from({ length: SESSIONS }, (_, session) => sessionBodies(session));
const response = Buffer.alloc(8200, 97);
const rawRequestHeaders = ['Host', '127.0.0.1:8080', 'Connection', 'keep-alive', 'content-type', 'application/json', 'x-api-key', 'sk-bench', 'content-length', '22000'];
// As undici hands them to the proxy's onHeaders: raw name and value buffers.
const responseHeaders = ['content-type', 'text/event-stream', 'request-id', 'req_bench', 'content-length', '8200', 'date', 'Mon, 30 Nov 2026 20:00:00 GMT', 'connection', 'keep-alive', 'keep-alive', 'timeout=60'].map((s) => Buffer.from(s, 'latin1'));
const tick = () => new Promise((r) => setImmediate(r));

async function measure(label: string, body: (dir: string) => Promise<void>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'roller-wire-cost-'));
  try {
    // One unmeasured pass first: process CPU counts every thread, and V8's optimizing compiles of a cold run (on
    // background threads) were most of what a single pass measured.
    mkdirSync(join(dir, 'warm-up'));
    await body(join(dir, 'warm-up'));
    mkdirSync(join(dir, 'measured'));
    const before = process.cpuUsage();
    await body(join(dir, 'measured'));
    const used = process.cpuUsage(before);
    const us = (used.user + used.system) / N;
    console.log(`${label.padEnd(44)} ${us.toFixed(1).padStart(6)} µs CPU per exchange (user ${(used.user / N).toFixed(1)}, kernel ${(used.system / N).toFixed(1)})`);
    return us;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The main thread's CPU so far (ms), or the process's where there are no per-thread counters. */
function forwardingCpuMs(): number {
  const main = mainThreadCpuMs();
  if (!Number.isNaN(main)) return main;
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

type Part = 'bookkeeping' | 'metas' | 'all';

/** `n` exchanges as the proxy makes them, appending what `part` says to `log`. */
async function exchanges(log: WireLogWriter, part: Part, n: number, turns: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const slot = i % SESSIONS;
    const turn = turns[slot]!++;
    const callId = `c-bench000-${String(i).padStart(6, '0')}`;
    const split = splitRequestHeaders([...rawRequestHeaders, 'x-claude-code-session-id', `bench-${slot}-${Math.floor(turn / TURNS)}`]);
    const meta: RequestMeta = { seq: i, transport: 'http', protocol: 'anthropic-messages', method: 'POST', path: '/v1/messages?sse', upstream_path: '/v1/messages?sse', started_at: Date.now(), identity: split.identity, dropped: split.dropped };
    const head = splitResponseHead(200, responseHeaders).recorded;
    const end = { first_byte_at: Date.now(), ended_at: Date.now(), upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] };
    if (part !== 'bookkeeping') {
      log.appendRequest(callId, meta, part === 'all' ? bodies[slot]![turn % TURNS]! : undefined);
      log.appendResponseHead(callId, 200, head);
      if (part === 'all') log.append(callId, 'd', undefined, response);
      log.appendEnd(callId, end);
    }
    if (i % 64 === 0) await tick();
  }
}

/** Main-thread µs per exchange of each part: the median of `rounds` alternated measurements. */
async function parts(rounds: number): Promise<Record<Part, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'roller-wire-parts-'));
  const samples: Record<Part, number[]> = { bookkeeping: [], metas: [], all: [] };
  try {
    const log = await WireLogWriter.open(join(dir, 'raw', 'wire.frames'));
    const turns = new Array<number>(SESSIONS).fill(0);
    for (const part of Object.keys(samples) as Part[]) await exchanges(log, part, 40_000, turns); // unmeasured
    for (let r = 0; r < rounds; r++) {
      for (const part of Object.keys(samples) as Part[]) {
        const before = forwardingCpuMs();
        await exchanges(log, part, N_PARTS, turns);
        samples[part].push(((forwardingCpuMs() - before) * 1000) / N_PARTS);
      }
    }
    await log.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  return { bookkeeping: median(samples.bookkeeping), metas: median(samples.metas), all: median(samples.all) };
}

async function main(): Promise<void> {
  // Whole bodies copied and written: the least any recorder that keeps every byte pays.
  const limit = await measure('limit: copy + writev of the same bytes', async (dir) => {
    const fd = openSync(join(dir, 'plain'), 'w');
    let batch: Buffer[] = [];
    let bytes = 0;
    for (let i = 0; i < N; i++) {
      const body = bodies[i % SESSIONS]![Math.floor(i / SESSIONS) % TURNS]!;
      for (const b of [body, response]) {
        batch.push(Buffer.from(b));
        bytes += b.length;
      }
      if (bytes >= 512 << 10) {
        writevSync(fd, batch);
        batch = [];
        bytes = 0;
      }
      if (i % 64 === 0) await tick();
    }
    if (batch.length) writevSync(fd, batch);
    closeSync(fd);
  });
  const roller = await measure('roller: wire log (delta, metas, slabs)', async (dir) => {
    const log = await WireLogWriter.open(join(dir, 'raw', 'wire.frames'));
    await exchanges(log, 'all', N, new Array<number>(SESSIONS).fill(0));
    await log.close();
  });
  console.log(`roller / limit: ${(roller / limit).toFixed(2)} x the CPU of copying and writing every byte whole`);

  const p = await parts(3);
  console.log(`\nthe forwarding (main) thread, µs per exchange, median of 3 alternated rounds of ${N_PARTS} exchanges:`);
  console.log(`  headers split and metas built, nothing appended   ${p.bookkeeping.toFixed(2)}`);
  console.log(`  + the three metas and their frames (no bodies)    ${p.metas.toFixed(2)}   (metas and frames: ${(p.metas - p.bookkeeping).toFixed(2)})`);
  console.log(`  + the request body (delta) and the response       ${p.all.toFixed(2)}   (bodies: ${(p.all - p.metas).toFixed(2)}; the wire log in all: ${(p.all - p.bookkeeping).toFixed(2)})`);
}

await main();
