/**
 * Request bodies too large to hold whole (issue 30, item 8): past `streamRequestBodiesOver` the proxy forwards a body as
 * it arrives, each chunk logged before it is sent, and readers give the whole body back as one request frame.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { readWireFrames, WireLogWriter, WIRE_LOG_FILE } from '../../src/sources/proxy/index.js';
import { projectCalls } from '../../src/sources/proxy/project-calls.js';
import { startCapture } from '../support/capture.js';
import { collect } from '../support/http.js';
import { rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-streamed-bodies');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The log's frames as written (header and byte count), without the reader's joining. Read while the proxy writes, the
 * last frame may be half there: it is not counted (not yet logged), which only makes the check stricter.
 */
function rawFrames(path: string): { c: string; k: string; n: number; m?: Record<string, unknown> }[] {
  const buf = readFileSync(path);
  const out: { c: string; k: string; n: number; m?: Record<string, unknown> }[] = [];
  for (let at = 0; at < buf.length; ) {
    const nl = buf.indexOf(10, at);
    if (nl < 0) break;
    const h = JSON.parse(buf.toString('utf8', at, nl)) as { c: string; k: string; n: number; m?: Record<string, unknown> };
    if (nl + 1 + h.n + 1 > buf.length) break;
    out.push(h);
    at = nl + 1 + h.n + 1;
  }
  return out;
}

/** A JSON request body of about `bytes`, every byte position distinguishable. */
function bigJsonBody(bytes: number): Buffer {
  const text = Array.from({ length: Math.ceil(bytes / 16) }, (_, i) => i.toString(36).padStart(15, '0')).join(' ');
  return Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text }] }));
}

interface Upstream {
  url: string;
  /** Per request: the bytes it received, and how each chunk's arrival compared with the wire log at that moment. */
  received: { body: Buffer; aheadOfLog: number; aborted: boolean }[];
}

/** An upstream that, at each chunk it receives, checks the wire log already holds at least that much of the body. */
async function checkingUpstream(wireLog: () => string, answer: 'at-end' | 'never' = 'at-end'): Promise<Upstream> {
  const received: Upstream['received'] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const entry = { body: Buffer.alloc(0), aheadOfLog: 0, aborted: false };
    received.push(entry);
    const parts: Buffer[] = [];
    let got = 0;
    req.on('data', (c: Buffer) => {
      parts.push(c);
      got += c.length;
      if (answer === 'never') return; // (no check: reading the log at every chunk of 192 MB is slow)
      const logged = rawFrames(wireLog())
        .filter((f) => f.k === 'q' || f.k === 'b')
        .reduce((n, f) => n + f.n, 0);
      entry.aheadOfLog = Math.max(entry.aheadOfLog, got - logged);
    });
    req.on('aborted', () => (entry.aborted = true));
    req.on('close', () => (entry.body = Buffer.concat(parts)));
    req.on('end', () => {
      entry.body = Buffer.concat(parts);
      if (answer === 'at-end') res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 1, output_tokens: 1 } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

async function captureWith(extra: Parameters<typeof startCapture>[2], answer?: 'at-end' | 'never') {
  let logPath = '';
  const up = await checkingUpstream(() => logPath, answer);
  const c = await startCapture(tmp.path, up.url, extra);
  logPath = join(c.outDir, WIRE_LOG_FILE);
  cleanups.push(async () => void (await c.finish()));
  return { ...c, up, logPath };
}

describe('bodies past streamRequestBodiesOver are forwarded as they arrive', () => {
  it('each chunk is on disk before the upstream gets it; readers give back the whole body; the call is whole', async () => {
    const { proxy, finish, up, logPath } = await captureWith({ streamRequestBodiesOver: 256 << 10 });
    const body = bigJsonBody(3 << 20);
    // One with a content-length, one chunked (no length): both streamed.
    for (const chunked of [false, true]) {
      const res = await request(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chunked ? Readable.from((async function* () { for (let at = 0; at < body.length; at += 100_000) yield body.subarray(at, at + 100_000); })()) : body,
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    const calls = (await finish()).sort((a, b) => a.seq - b.seq);
    expect(up.received.map((r) => r.body.equals(body))).toEqual([true, true]);
    expect(up.received.map((r) => r.aheadOfLog)).toEqual([0, 0]);

    const raw = rawFrames(logPath);
    for (const c of [calls[0]!.call_id, calls[1]!.call_id]) {
      const mine = raw.filter((f) => f.c === c);
      expect(mine[0]).toMatchObject({ k: 'q', m: { body_streamed: true } });
      expect(mine.filter((f) => f.k === 'b').length).toBeGreaterThan(2);
      expect(mine.filter((f) => f.k === 'b' && f.m?.end === true)).toHaveLength(1);
      expect(mine.filter((f) => f.k === 'x')).toHaveLength(1);
    }
    const requests = (await collect(readWireFrames(logPath))).filter((f) => f.k === 'q');
    expect(requests.map((q) => [q.body.equals(body), (q.m as Record<string, unknown>).body_streamed])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(calls.map((c) => [c.http_status, c.execution_status, (c.context as { messages: unknown[] }).messages.length])).toEqual([
      [200, 'completed', 1],
      [200, 'completed', 1],
    ]);
  });

  it('eight 24 MB bodies at once through a 16 MB budget: all forwarded together, none refused, none waiting on another', async () => {
    const { proxy, finish, up } = await captureWith({ maxBufferedBytes: 16 << 20, streamRequestBodiesOver: 1 << 20 }, 'never');
    const body = bigJsonBody(24 << 20);
    const sent = Array.from({ length: 8 }, () => request(`${proxy.url}/v1/messages`, { method: 'POST', body }).catch((e: Error) => e));
    // Held whole, 24 MB could never fit 16 MB (a 503 each); streamed, all eight reach the upstream at once.
    for (let i = 0; i < 1000 && up.received.length < 8; i++) await sleep(20);
    expect(up.received).toHaveLength(8);
    await finish(); // the upstream never answers: closing ends them
    await Promise.all(sent);
  }, 60_000);

  it('a client that leaves mid-body: the upstream request is cut, the call recorded as interrupted with why, one end frame', async () => {
    const { proxy, finish, up, logPath } = await captureWith({ streamRequestBodiesOver: 64 << 10 });
    const body = bigJsonBody(2 << 20);
    const ac = new AbortController();
    const res = request(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-length': String(body.length) },
      signal: ac.signal,
      body: Readable.from(
        (async function* () {
          yield body.subarray(0, 512 << 10);
          await sleep(60_000); // never sends the rest
        })(),
      ),
    }).catch((e: Error) => e);
    while (up.received.length === 0 || rawFrames(logPath).filter((f) => f.k === 'b').length === 0) await sleep(20);
    ac.abort();
    await res;
    for (let i = 0; i < 200 && !up.received[0]!.aborted; i++) await sleep(20);
    expect(up.received[0]!.aborted).toBe(true);
    const [call] = await finish();
    expect(call!.execution_status).toBe('interrupted');
    expect(call!.context).toBeNull();
    expect(rawFrames(logPath).filter((f) => f.k === 'x')).toHaveLength(1);
    const q = (await collect(readWireFrames(logPath))).find((f) => f.k === 'q')!;
    expect((q.m as { body_omitted?: string }).body_omitted).toMatch(/cut after \d+ bytes \(the exchange ended before it did\)/);
  });

  it('a chunked body that grows past maxRequestBytes mid-stream: a 413 that says why, the upstream request cut', async () => {
    const { proxy, finish, up } = await captureWith({ streamRequestBodiesOver: 64 << 10, maxRequestBytes: 1 << 20 });
    const chunk = Buffer.alloc(100 << 10, 0x61);
    const res = await request(`${proxy.url}/v1/messages`, {
      method: 'POST',
      body: Readable.from((async function* () { for (let i = 0; i < 30; i++) yield chunk; })()),
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(await res.body.text())).toMatchObject({ error: { type: 'roller_request_too_large', message: expect.stringContaining('maxRequestBytes') } });
    for (let i = 0; i < 200 && !up.received[0]?.aborted; i++) await sleep(20);
    expect(up.received[0]!.aborted).toBe(true);
    expect(up.received[0]!.body.length).toBeLessThanOrEqual(1 << 20);
    const [call] = await finish();
    expect(call!.errors.map((e) => e.code)).toContain('ROLLER_REQUEST_TOO_LARGE');
  });

  it('the disk fills mid-body (a file size limit on roller proxy): a 503 that says why, the rest never forwarded, exit 1', async () => {
    const out = join(tmp.path, 'full');
    let logPath = '';
    const up = await checkingUpstream(() => logPath);
    // Writes past 6 MB fail with EFBIG (SIGXFSZ ignored, as a full disk's ENOSPC would): after the 4 MB the proxy holds whole.
    const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f ${6 * 1024}; exec "$0" proxy --upstream "$1" --out "$2"`, rollerBin, up.url, out], { stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    logPath = join(out, WIRE_LOG_FILE);
    const body = bigJsonBody(10 << 20);
    const res = await request(`${url}/v1/messages`, { method: 'POST', body });
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(await res.body.text())).toMatchObject({ error: { type: 'roller_capture_failed', message: expect.stringContaining('cannot be written') } });
    for (let i = 0; i < 200 && !up.received[0]?.aborted; i++) await sleep(20);
    expect(up.received[0]!.aborted).toBe(true);
    expect(up.received[0]!.aheadOfLog).toBe(0); // what reached the upstream is on disk
    expect(up.received[0]!.body.length).toBeLessThan(6 << 20);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(1);
    expect(stderr).toMatch(/wire log .* cannot be written .*\[ROLLER_WIRE_LOG_WRITE_FAILED\]/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a log that ends inside a streamed body (the proxy was killed): the request is kept, its body omitted with why', async () => {
    const path = join(tmp.path, 'killed', WIRE_LOG_FILE);
    const w = await WireLogWriter.open(path);
    const meta = { seq: 0, transport: 'http', protocol: 'anthropic-messages', method: 'POST', path: '/v1/messages', upstream_path: '/v1/messages', started_at: 0, identity: {}, dropped: [], body_streamed: true };
    w.append('c-1', 'q', meta, Buffer.from('{"model":"m",'));
    w.append('c-1', 'b', undefined, Buffer.from('"messages":['));
    await w.close();
    const frames = await collect(readWireFrames(path));
    expect(frames.map((f) => [f.k, (f.m as { body_omitted?: string }).body_omitted, f.body.length])).toEqual([['q', 'its body was cut after 25 bytes (the wire log ends before it did)', 0]]);
    const calls = await collect(projectCalls(readWireFrames(path), { responsePath: WIRE_LOG_FILE }));
    expect(calls.map((c) => c.execution_status)).toEqual(['interrupted']);
  });
});
