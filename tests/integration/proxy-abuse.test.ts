/**
 * The proxy under abuse (issue 47 §6), each with real processes and sockets: a busy port is a typed error, a dot
 * segment cannot climb out of the upstream's path prefix, a decompression bomb stops at its limit, every file written
 * is owner-only, and a projection process killed mid-run never stops the forwarding.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { MAX_WEBSOCKET_MESSAGE_BYTES } from '../../src/sources/proxy/websocket-relay.js';
import { decodeBody } from '../../src/transforms/protocols/decode-body.js';
import { startCapture } from '../support/capture.js';
import { startUpstream } from '../support/http.js';
import { rollerBin } from '../support/paths.js';
import { RawClient } from '../support/raw-http.js';
import { roller } from '../support/roller-cli.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-abuse');
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function okUpstream() {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
  });
  cleanups.push(() => up.close());
  return { up, seen };
}

async function startProxyCli(args: string[]) {
  const child = spawn(rollerBin, ['proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  cleanups.push(() => void child.kill('SIGKILL'));
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, url, stderr: () => stderr };
}

describe('the proxy under abuse: WebSocket', () => {
  async function wsUpstream(onConnection: (ws: WebSocket) => void) {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    server.on('connection', onConnection);
    cleanups.push(() => {
      for (const c of server.clients) c.terminate();
      server.close();
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  it('every client message is on disk before it goes upstream; one that is not a request is recorded too', async () => {
    const heard: string[] = [];
    const upstream = await wsUpstream((ws) => ws.on('message', (d: Buffer) => heard.push(d.toString())));
    const capture = await startCapture(tmp.path, upstream);
    cleanups.push(() => capture.finish());
    const ws = new WebSocket(`${capture.proxy.url.replace('http', 'ws')}/responses`);
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: [] }));
    ws.send(JSON.stringify({ type: 'response.cancel', note: 'not a request' }));
    while (heard.length < 2) await sleep(10);
    const frames = (await readFile(capture.proxy.wirePath)).toString('latin1');
    expect(frames).toContain('"k":"u"');
    expect(frames).toContain('not a request');
    ws.close();
    const calls = await capture.finish();
    expect(calls).toHaveLength(1); // the 'u' frame is evidence, not a call
  });

  it('a message past the size limit closes the connection (1009); bytes before the upgrade are bounded', async () => {
    const upstream = await wsUpstream(() => undefined);
    const capture = await startCapture(tmp.path, upstream);
    cleanups.push(() => capture.finish());
    const ws = new WebSocket(`${capture.proxy.url.replace('http', 'ws')}/responses`);
    await once(ws, 'open');
    ws.send(Buffer.alloc(MAX_WEBSOCKET_MESSAGE_BYTES + 1, 0x61));
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).toBe(1009);

    // A raw client that sends an upgrade and then megabytes before any answer: refused, not held.
    const slowUpstream = createServer(() => undefined); // accepts the TCP connection, never answers the upgrade
    slowUpstream.listen(0, '127.0.0.1');
    await once(slowUpstream, 'listening');
    cleanups.push(() => void slowUpstream.close());
    const capture2 = await startCapture(tmp.path, `http://127.0.0.1:${(slowUpstream.address() as AddressInfo).port}/v1`);
    cleanups.push(() => capture2.finish());
    const raw = await RawClient.connect(capture2.proxy.url);
    raw.socket.write('GET /responses HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n');
    raw.socket.write(Buffer.alloc(2 << 20, 0x61));
    const res = await raw.response('GET');
    expect(res.status).toBe(400);
    expect(res.body.toString()).toContain('before the WebSocket was accepted');
  });

  it('an upstream flooding a client that does not read is paused: the proxy does not hold the flood', async () => {
    let sent = 0;
    const upstream = await wsUpstream((ws) => {
      const chunk = Buffer.alloc(1 << 20, 0x62);
      const pump = () => {
        while (ws.bufferedAmount < 4 << 20 && sent < 400) {
          ws.send(chunk);
          sent++;
        }
        if (sent < 400) setTimeout(pump, 5);
      };
      pump();
    });
    const capture = await startCapture(tmp.path, upstream);
    cleanups.push(() => capture.finish());
    const ws = new WebSocket(`${capture.proxy.url.replace('http', 'ws')}/responses`);
    await once(ws, 'open');
    ws.pause(); // the client reads nothing
    await sleep(1500);
    // 400 MB offered; paused, the upstream gets no further than the relay's window and the sockets' buffers.
    expect(sent).toBeLessThan(100);
    ws.terminate();
  });
});

describe('the proxy under abuse', () => {
  it('clients that declare large bodies and trickle them hold only what they sent: bodyless and small requests pass at once', async () => {
    const { up, seen } = await okUpstream();
    // Five 1 MB declarations against a 4 MB budget: reserving declared lengths would queue everything behind them.
    const capture = await startCapture(tmp.path, up.url, { maxBufferedBytes: 4 << 20 });
    cleanups.push(() => capture.finish());
    const tricklers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const c = await RawClient.connect(capture.proxy.url);
        c.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: ${1 << 20}\r\n\r\n{"a":`);
        return c;
      }),
    );
    const drip = setInterval(() => tricklers.forEach((c) => c.socket.write('1')), 50);
    cleanups.push(() => {
      clearInterval(drip);
      tricklers.forEach((c) => c.socket.destroy());
    });
    await sleep(200);
    for (const [method, body] of [['GET', undefined], ['POST', '{"model":"m","messages":[]}']] as const) {
      // Before, these waited behind the declared lengths until the tricklers' request timeout (5 min).
      const res = await request(`${capture.proxy.url}/v1/messages`, { method, ...(body ? { body } : {}), headersTimeout: 20_000 });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    expect(seen).toHaveLength(2);
  });

  it("a client that hangs up (FIN) while its call waits upstream aborts that call: the upstream connection is closed at once", async () => {
    const upstreamClosed: number[] = [];
    const up = await startUpstream((req) => {
      req.socket.once('close', () => upstreamClosed.push(Date.now()));
      // never answers
    });
    cleanups.push(() => up.close());
    const capture = await startCapture(tmp.path, up.url, { upstreamHeadersTimeoutMs: 600_000 });
    cleanups.push(() => capture.finish());
    const client = await RawClient.connect(capture.proxy.url);
    client.socket.write('POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
    await sleep(200);
    const t0 = Date.now();
    client.socket.end();
    while (upstreamClosed.length === 0 && Date.now() - t0 < 5000) await sleep(20);
    expect(upstreamClosed).toHaveLength(1);
    const calls = await capture.finish();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.execution_status).toBe('interrupted');
  });

  it('under a low descriptor limit (ulimit -n 128, below what 100 held calls would need), clients that hang up free their upstream connections: a later request is served', async () => {
    let held = 0;
    const up = await startUpstream((req, res) => {
      if (req.url === '/v1/stuck') return void held++; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    cleanups.push(() => up.close());
    const out = join(tmp.path, 'low-fd');
    const child = spawn('sh', ['-c', `ulimit -n 128 && exec "$0" proxy --upstream ${up.url} --out ${out}`, rollerBin], { stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    // 100 calls that wait upstream forever, each client hanging up (FIN) once the upstream holds its request.
    for (let i = 0; i < 100; i++) {
      const c = await RawClient.connect(url);
      c.socket.write('POST /v1/stuck HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
      while (held <= i) await sleep(5);
      c.socket.end();
    }
    const res = await request(`${url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it('a busy port is a typed error that says what to do, never a stack trace', async () => {
    const holder = createServer();
    holder.listen(0, '127.0.0.1');
    await once(holder, 'listening');
    cleanups.push(() => void holder.close());
    const port = (holder.address() as AddressInfo).port;
    const r = await roller('proxy', '--upstream', 'http://127.0.0.1:9', '--out', join(tmp.path, 'busy'), '--port', String(port));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ROLLER_PORT_UNAVAILABLE');
    expect(r.stderr).toContain(`127.0.0.1:${port} is already in use`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Nothing was captured, so nothing is left: no empty capture directory to mistake for a capture.
    expect(existsSync(join(tmp.path, 'busy'))).toBe(false);
    // A directory the user made for it stays, as it was.
    mkdirSync(join(tmp.path, 'mine'));
    writeFileSync(join(tmp.path, 'mine', 'notes.txt'), 'kept');
    expect((await roller('proxy', '--upstream', 'http://127.0.0.1:9', '--out', join(tmp.path, 'mine'), '--port', String(port))).code).toBe(2);
    expect(readdirSync(join(tmp.path, 'mine'))).toEqual(['notes.txt']);
  });

  it("a '.' or '..' segment (plain or percent-encoded) is refused: the upstream's path prefix is a boundary", async () => {
    const { up, seen } = await okUpstream();
    const capture = await startCapture(tmp.path, `${up.url}/tenant-a/v1`);
    cleanups.push(() => capture.finish());
    for (const path of ['/../../tenant-b/v1/messages', '/messages/%2e%2e/%2E%2E/admin', '/./messages']) {
      // A raw socket: an HTTP client library would resolve the dots itself before sending.
      const client = await RawClient.connect(capture.proxy.url);
      client.socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`);
      const res = await client.response();
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body.toString()).toContain("'.' or '..' segment");
    }
    const ok = await request(`${capture.proxy.url}/messages`, { method: 'POST', body: '{}' });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    expect(seen).toEqual(['/tenant-a/v1/messages']);
  });

  it('a compressed body that decodes past its limit is a clear decode error, not all of memory', () => {
    const bomb = gzipSync(Buffer.alloc(8 << 20));
    expect(bomb.length).toBeLessThan(64 << 10);
    expect(() => decodeBody(bomb, 'gzip', 1 << 20)).toThrow(/decodes past 1048576 bytes/);
    expect(decodeBody(bomb, 'gzip').length).toBe(8 << 20);
  });

  it('every file in a pre-existing --out is owner-only (0600 files, 0700 directories)', async () => {
    const { up } = await okUpstream();
    const out = join(tmp.path, 'existing-out');
    await mkdir(out, { mode: 0o755 });
    const proxy = await startProxyCli(['--upstream', up.url, '--out', out, '--wire-trace', 'full']);
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{"model":"m"}' });
    await res.body.text();
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'close');
    const entries = await readdir(out, { recursive: true, withFileTypes: true });
    expect(entries.filter((e) => e.isFile()).length).toBeGreaterThanOrEqual(2);
    for (const e of entries) {
      const mode = (await stat(join(e.parentPath, e.name))).mode & 0o777;
      expect([join(e.parentPath, e.name), mode.toString(8)]).toEqual([join(e.parentPath, e.name), e.isDirectory() ? '700' : '600']);
    }
  });

  it('the projection process killed (kill -9) never stops the forwarding: requests are still answered and logged', async () => {
    const { up, seen } = await okUpstream();
    const out = join(tmp.path, 'projection-killed');
    const proxy = await startProxyCli(['--upstream', up.url, '--out', out]);
    const projector = execFileSync('pgrep', ['-P', String(proxy.child.pid)], { encoding: 'utf8' }).trim().split('\n')[0]!;
    process.kill(Number(projector), 'SIGKILL');
    await sleep(300);
    for (let i = 0; i < 3; i++) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{"model":"m"}' });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    expect(seen).toHaveLength(3);
    expect(proxy.stderr()).toContain('still forwarding and recording');
    proxy.child.kill('SIGTERM');
    const [code] = (await once(proxy.child, 'close')) as [number];
    expect(code).toBe(1);
    // The wire log holds every call: project-wire gives calls.jsonl again.
    const again = await roller('project-wire', out);
    expect(again.code).toBe(0);
    const calls = (await import('node:fs')).readFileSync(join(out, 'calls.jsonl'), 'utf8').trim().split('\n');
    expect(calls).toHaveLength(3);
  });
});
