/**
 * What recording costs the forwarding thread, without the network: 20,000 exchanges shaped like the proxy bench's
 * (agent sessions whose ~22 KB bodies grow by a turn; an 8 KB SSE response) appended to a WireLogWriter — request
 * (delta-encoded), response head, body, end — against the limit measured in the same run: the same request and
 * response bytes merely copied into buffers and written with one writev per 512 KB. CPU per exchange (user and
 * kernel, all threads) and the ratio.
 *
 *   npm run build && node dist/bench/proxy/wire-log-cost.js
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { splitRequestHeaders, splitResponseHead } from '../../src/sources/proxy/headers.js';
import { WireLogWriter, type RequestMeta } from '../../src/sources/proxy/wire-log.js';
import { sessionBodies, TURNS } from './session-bodies.js';

const N = 20_000;
const SESSIONS = 16;
const bodies = Array.from({ length: SESSIONS }, (_, session) => sessionBodies(session));
const response = Buffer.alloc(8200, 97);
const rawRequestHeaders = ['Host', '127.0.0.1:8080', 'Connection', 'keep-alive', 'content-type', 'application/json', 'x-api-key', 'sk-bench', 'content-length', '22000'];
// As undici hands them to the proxy's onHeaders: raw name and value buffers.
const responseHeaders = ['content-type', 'text/event-stream', 'request-id', 'req_bench', 'content-length', '8200', 'date', 'Mon, 30 Nov 2026 20:00:00 GMT'].map((s) => Buffer.from(s, 'latin1'));
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
    for (let i = 0; i < N; i++) {
      const slot = i % SESSIONS;
      const turn = Math.floor(i / SESSIONS);
      const callId = `c-bench000-${String(i).padStart(6, '0')}`;
      const split = splitRequestHeaders([...rawRequestHeaders, 'x-claude-code-session-id', `bench-${slot}-${Math.floor(turn / TURNS)}`]);
      const meta: RequestMeta = { seq: i, transport: 'http', protocol: 'anthropic-messages', method: 'POST', path: '/v1/messages', upstream_path: '/v1/messages', started_at: Date.now(), identity: split.identity, dropped: split.dropped };
      await log.appendRequest(callId, meta, bodies[slot]![turn % TURNS]!);
      log.appendResponseHead(callId, 200, splitResponseHead(200, responseHeaders).recorded);
      log.append(callId, 'd', undefined, Buffer.from(response));
      log.appendEnd(callId, { first_byte_at: Date.now(), ended_at: Date.now(), upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] });
      if (i % 64 === 0) await tick();
    }
    await log.close();
  });
  console.log(`roller / limit: ${(roller / limit).toFixed(2)} x the CPU of copying and writing every byte whole`);
}

await main();
