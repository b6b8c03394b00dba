/**
 * The recording proxy tried as an attacker and a careless client would: raw sockets, odd targets, slow heads, a full
 * disk, stuck upstreams, big bodies. Each test names the defect it holds down (issue 30).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createNetServer, connect, type Server as NetServer, type Socket } from 'node:net';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import { readWireFrames } from '../../src/sources/proxy/index.js';
import { startScriptedModel } from '../../src/sources/scripted-model/index.js';
import { startCapture } from '../support/capture.js';
import { startUpstream } from '../support/http.js';
import { rollerBin } from '../support/paths.js';
import { RawClient, rawRequest } from '../support/raw-http.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-hardening');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function capture(upstream: string, extra: Parameters<typeof startCapture>[2] = {}) {
  const c = await startCapture(tmp.path, upstream, extra);
  cleanups.push(async () => void (await c.finish()));
  return c;
}

/** An upstream that answers every request and keeps the paths it was sent (so a test sees what arrived, and where). */
async function echoUpstream() {
  const seen: string[] = [];
  const up = await startUpstream((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'configured' });
    res.end('{"ok":true}');
  });
  cleanups.push(() => up.close());
  return { ...up, seen };
}

/** A TCP server that counts connections and never answers (a host no request may reach, or a stuck upstream). */
async function silentServer(): Promise<{ port: number; connections: Socket[]; server: NetServer }> {
  const connections: Socket[] = [];
  const server = createNetServer((s) => {
    connections.push(s);
    s.on('error', () => {});
    s.resume(); // read (and drop) what comes, so the peer's leaving is seen
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    for (const s of connections) s.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, connections, server };
}

/** `roller proxy` as a child process; resolves once it prints its URL. */
async function rollerProxy(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(rollerBin, ['proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, url, stderr: () => stderr };
}

function upgradeRequest(target: string, extra: string[] = []): string {
  return [`GET ${target} HTTP/1.1`, 'host: 127.0.0.1', 'connection: Upgrade', 'upgrade: websocket', 'sec-websocket-version: 13', 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==', ...extra, '', ''].join('\r\n');
}

async function rawExchange(url: string, bytes: string): Promise<string> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  await once(socket, 'connect');
  let reply = '';
  socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
  socket.on('error', () => {});
  socket.write(bytes);
  // Until the peer closes, or a moment after its first bytes (a relayed WebSocket stays open).
  await Promise.race([once(socket, 'close'), once(socket, 'data').then(() => sleep(100)), sleep(3000)]);
  socket.destroy();
  return reply;
}

describe('issue 30 defects, each held down', () => {
  it('1. a WebSocket upgrade whose target does not parse gets a 400, and the process lives on with its calls', async () => {
    const model = await startScriptedModel();
    cleanups.push(() => model.close());
    const out = join(tmp.path, 'd1');
    const proxy = await rollerProxy(['--upstream', model.url, '--out', out]);
    for (const target of ['//[::1/v1/responses', '/v1/responses#frag', '//[bad host]:x/v1/responses', 'http://[::1/v1/responses']) {
      expect(await rawExchange(proxy.url, upgradeRequest(target))).toMatch(/^HTTP\/1\.1 400 /);
    }
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[HELLO]' }] }) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(proxy.child.exitCode).toBeNull();
    proxy.child.kill('SIGTERM');
    expect(((await once(proxy.child, 'exit')) as [number])[0]).toBe(0);
    expect((await readFile(join(out, 'calls.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('2. a request target can never send the client (and its Authorization) to another host: WebSocket and HTTP', async () => {
    const evil = await silentServer();
    const configured = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(configured, 'listening');
    const arrived: string[] = [];
    configured.on('connection', (ws, req) => {
      arrived.push(req.url ?? '');
      ws.close();
    });
    cleanups.push(() => void configured.close());
    const { proxy } = await capture(`http://127.0.0.1:${(configured.address() as { port: number }).port}`);
    const auth = 'authorization: Bearer sk-never-elsewhere';
    for (const target of [`//127.0.0.1:${evil.port}/v1/responses`, `http://127.0.0.1:${evil.port}/v1/responses`, `https://127.0.0.1:${evil.port}/v1/responses`]) {
      await rawExchange(proxy.url, upgradeRequest(target, [auth]));
    }
    expect(evil.connections).toHaveLength(0);
    expect(arrived).toEqual([`//127.0.0.1:${evil.port}/v1/responses`, '/v1/responses', '/v1/responses']);

    const up = await echoUpstream();
    const { proxy: http } = await capture(up.url);
    for (const target of [`http://127.0.0.1:${evil.port}/v1/messages?x=1`, `//127.0.0.1:${evil.port}/v1/messages`]) {
      await rawExchange(http.url, rawRequest('POST', target, '{}', { headers: [auth, 'connection: close'] }));
    }
    expect(evil.connections).toHaveLength(0);
    expect(up.seen).toEqual(['/v1/messages?x=1', `//127.0.0.1:${evil.port}/v1/messages`]);
  });

  it('3. bodyless requests pipelined in one write are each answered, and a stray CRLF after a request is harmless', async () => {
    const up = await echoUpstream();
    const { proxy, finish } = await capture(up.url);
    const cases = [
      ['GET /a HTTP/1.1\r\nhost: x\r\n\r\nGET /b HTTP/1.1\r\nhost: x\r\n\r\n', ['GET', 'GET']],
      ['POST /c HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\nGET /d HTTP/1.1\r\nhost: x\r\n\r\n', ['POST', 'GET']],
      ['GET /e HTTP/1.1\r\nhost: x\r\n\r\n\r\n', ['GET']],
    ] as const;
    for (const [bytes, methods] of cases) {
      const client = await RawClient.connect(proxy.url);
      client.write(bytes);
      for (const m of methods) {
        const res = await Promise.race([client.response(m), sleep(3000).then(() => undefined)]);
        expect(res?.status).toBe(200);
      }
      client.socket.destroy();
    }
    expect(up.seen).toEqual(['/a', '/b', '/c', '/d', '/e']);
    const calls = await finish();
    expect(calls.map((c) => c.execution_status)).toEqual(Array(5).fill('completed'));
  });

  it('4. credentials in the query string never reach a file; --upstream credentials are never printed', async () => {
    const up = await echoUpstream();
    const out = join(tmp.path, 'd4');
    const { proxy, done } = await startProxyPipeline({ upstream: `${up.url}/base?api-version=2024&key=UPSTREAMKEY123`, outDir: out, wireTrace: 'full' });
    const secrets = ['QKEY111', 'QAPIKEY222', 'QACCESS333', 'QTOKEN444', 'QSIG555', 'QSECRET666', 'UPSTREAMKEY123'];
    const path = `/v1/messages?beta=true&key=${secrets[0]}&api_key=${secrets[1]}&access_token=${secrets[2]}&token=${secrets[3]}&sig=${secrets[4]}&X-Amz-Client-Secret=${secrets[5]}`;
    const res = await request(`${proxy.url}${path}`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
    await res.body.text();
    await proxy.close();
    await done;
    // The upstream got everything it was meant to: the client's query, and the upstream's own parameters.
    expect(up.seen).toEqual([`/base${path}&api-version=2024&key=UPSTREAMKEY123`]);
    const written = await allBytes(out);
    for (const s of secrets) expect(written).not.toContain(s);
    expect(written).toContain('beta=true&key=REDACTED&api_key=REDACTED');
    expect(written).toContain('api-version=2024');

    const cli = await rollerProxy(['--upstream', `http://user:PASSWORD777@127.0.0.1:${new URL(up.url).port}/x?token=TOKEN888`, '--out', join(tmp.path, 'd4cli')]);
    cli.child.kill('SIGTERM');
    await once(cli.child, 'close');
    expect(cli.stderr()).toContain('127.0.0.1');
    expect(cli.stderr()).not.toMatch(/PASSWORD777|TOKEN888|user:/);
  });

  it('5. a client that trickles its request head is cut at the header timeout', async () => {
    const up = await echoUpstream();
    const { proxy } = await capture(up.url, { headersTimeoutMs: 600 });
    const client = await RawClient.connect(proxy.url);
    client.write('POST /v1/messages HTTP/1.1\r\nhost: x\r\n');
    for (let i = 0; i < 40 && !client.isClosed; i++) {
      client.write(`x-slow-${i}: y\r\n`);
      await sleep(100);
    }
    expect(client.isClosed).toBe(true);
    expect(up.seen).toHaveLength(0);
  });

  it('6. a wire log that cannot be written fails closed: 503s that say why, reported at once, exit code 1 (roller proxy)', async () => {
    const up = await echoUpstream();
    const out = join(tmp.path, 'd6');
    await mkdir(join(out, 'raw'), { recursive: true });
    await symlink('/dev/full', join(out, 'raw', 'wire.frames')); // a file that refuses every write (ENOSPC)
    const proxy = await rollerProxy(['--upstream', up.url, '--out', out]);
    const answers: { status: number; body: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', n: i }) });
      answers.push({ status: res.statusCode, body: await res.body.text() });
    }
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    for (const a of answers) expect(JSON.parse(a.body)).toMatchObject({ error: { type: 'roller_capture_failed' } });
    expect(answers[0]!.body).toMatch(/ENOSPC/);
    expect(up.seen).toHaveLength(0); // nothing went upstream unrecorded
    expect(proxy.stderr()).toMatch(/wire log .* cannot be written .*ENOSPC.*\[ROLLER_WIRE_LOG_WRITE_FAILED\]/);
    proxy.child.kill('SIGTERM');
    const [code] = (await once(proxy.child, 'close')) as [number];
    expect(code).toBe(1);
    expect(proxy.stderr()).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it('7. a WebSocket client that leaves before the upstream accepts takes the upstream connection with it', async () => {
    const stuck = await silentServer();
    const { proxy } = await capture(`http://127.0.0.1:${stuck.port}`);
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(upgradeRequest('/v1/responses'));
    for (let i = 0; i < 50 && stuck.connections.length === 0; i++) await sleep(20);
    expect(stuck.connections).toHaveLength(1);
    socket.destroy();
    const upstreamSide = stuck.connections[0]!;
    await Promise.race([once(upstreamSide, 'close'), sleep(3000)]);
    expect(upstreamSide.destroyed).toBe(true);
  });

  it('8a. request bodies are bounded across all requests: past the budget a body waits unread for its turn; one that never fits, a 503 that says why', async () => {
    const held: (() => void)[] = [];
    const up = await startUpstream((_req, res) => held.push(() => res.end('{}')));
    cleanups.push(() => up.close());
    // Bodies held whole (not streamed) up to 8 MB here, so a 5 MB one can never fit the 4 MB budget.
    const { proxy, finish } = await capture(up.url, { maxBufferedBytes: 4 << 20, streamRequestBodiesOver: 8 << 20 });
    const body = Buffer.alloc(3 << 20, 0x61);
    const first = request(`${proxy.url}/v1/messages`, { method: 'POST', body });
    while (held.length === 0) await sleep(10);
    // The second does not fit while the first is held: it waits, and nothing of it reaches the upstream.
    const second = request(`${proxy.url}/v1/messages`, { method: 'POST', body });
    await sleep(300);
    expect(held).toHaveLength(1);
    // One that could never fit is refused at once.
    const never = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: Buffer.alloc(5 << 20, 0x61) });
    expect(never.statusCode).toBe(503);
    expect(never.headers['retry-after']).toBe('1');
    expect(JSON.parse(await never.body.text())).toMatchObject({ error: { type: 'roller_proxy_busy', message: expect.stringContaining('can never fit') } });
    // A small body does not wait behind the large one: it is read and sent while the first is still held.
    const small = request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    for (let i = 0; i < 100 && held.length < 2; i++) await sleep(10);
    expect(held).toHaveLength(2);
    held[1]!();
    expect((await small).statusCode).toBe(200);
    await (await small).body.text();
    // The budget is given back once the upstream has the first request's head answered: the second is read and sent.
    held[0]!();
    expect((await first).statusCode).toBe(200);
    await (await first).body.text();
    while (held.length < 3) await sleep(10);
    held[2]!();
    expect((await second).statusCode).toBe(200);
    await (await second).body.text();
    const calls = await finish();
    calls.sort((a, b) => a.seq - b.seq);
    expect(calls.map((c) => c.http_status)).toEqual([200, 200, null, 200]);
    expect(calls[2]!.status_reasons.execution_status).toContain('maxBufferedBytes');
  });

  it('8c. a client that leaves while its body waits for the budget gives up its place, and is recorded', async () => {
    const held: (() => void)[] = [];
    const up = await startUpstream((_req, res) => held.push(() => res.end('{}')));
    cleanups.push(() => up.close());
    const { proxy, finish } = await capture(up.url, { maxBufferedBytes: 4 << 20 });
    const first = request(`${proxy.url}/v1/messages`, { method: 'POST', body: Buffer.alloc(3 << 20, 0x61) });
    while (held.length === 0) await sleep(10);
    const leaver = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    await once(leaver, 'connect');
    leaver.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: ${3 << 20}\r\n\r\n{"model":`);
    await sleep(100);
    leaver.destroy();
    await sleep(100);
    held[0]!();
    await (await first).body.text();
    // Its place is gone: a request after it is read and forwarded.
    const next = request(`${proxy.url}/v1/messages`, { method: 'POST', body: Buffer.alloc(3 << 20, 0x61) });
    while (held.length < 2) await sleep(10);
    held[1]!();
    expect((await next).statusCode).toBe(200);
    await (await next).body.text();
    const calls = (await finish()).sort((a, b) => a.seq - b.seq);
    expect(calls.map((c) => c.http_status)).toEqual([200, null, 200]);
    expect([calls[1]!.execution_status, calls[1]!.status_reasons.execution_status]).toEqual(['interrupted', expect.stringContaining('client')]);
  });

  it('8b. 256 requests stuck upstream do not hold up the next one; a stuck request ends at the upstream head timeout', async () => {
    const stuck: (() => void)[] = [];
    const up = await startUpstream((req, res) => {
      if (req.url === '/stuck') stuck.push(() => res.destroy());
      else res.end('{"ok":true}');
    });
    cleanups.push(async () => {
      for (const s of stuck) s();
      await up.close();
    });
    const { proxy } = await capture(up.url);
    const hanging = Array.from({ length: 256 }, () => request(`${proxy.url}/stuck`, { method: 'POST', body: '{}' }).catch(() => undefined));
    while (stuck.length < 256) await sleep(20);
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{}' });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    for (const s of stuck) s();
    await Promise.all(hanging);

    const { proxy: timed } = await capture(up.url, { upstreamHeadersTimeoutMs: 300 });
    const late = await request(`${timed.url}/stuck`, { method: 'POST', body: '{}' });
    expect(late.statusCode).toBe(504);
    expect(JSON.parse(await late.body.text())).toMatchObject({ error: { type: 'roller_upstream_timeout' } });
  }, 60_000);

  it('9. --out that is a file, or cannot be created, is a clear error (what, where, what to do), no stack trace', async () => {
    const file = join(tmp.path, 'a-file');
    await writeFile(file, 'x');
    for (const [out, says] of [
      [file, 'is a file, not a directory'],
      [join(file, 'sub'), 'is a file, not a directory'],
      ['/proc/roller-cannot-create-this', 'cannot be created'],
    ] as const) {
      const child = spawn(rollerBin, ['proxy', '--upstream', 'http://127.0.0.1:9', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).toBe(2);
      expect(stderr).toContain(out);
      expect(stderr).toContain(says);
      expect(stderr).toContain('choose');
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('what the proxy leaves behind', () => {
  it('every exchange in the wire log ends with exactly one end frame, its last: completed, refused, aborted, reset, unreachable', async () => {
    const model = await startScriptedModel();
    cleanups.push(() => model.close());
    const reset = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {}\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    cleanups.push(() => reset.close());
    const { proxy, finish } = await capture(model.url, { maxRequestBytes: 1000 });
    const ok = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[HELLO]' }] }) });
    await ok.body.text();
    const big = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: 'x'.repeat(5000) });
    expect(big.statusCode).toBe(413);
    await big.body.text();
    expect(await rawExchange(proxy.url, 'OPTIONS * HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    // a client that leaves mid-body, and one that leaves mid-response
    const half = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    await once(half, 'connect');
    half.write('POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 500\r\n\r\n{"model":');
    await sleep(100);
    half.destroy();
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: '[HELLO]' }));
    await once(ws, 'message');
    ws.terminate();
    const { proxy: viaReset, finish: finishReset } = await capture(reset.url);
    const cut = await request(`${viaReset.url}/v1/messages`, { method: 'POST', body: '{}' });
    await cut.body.text().catch(() => undefined);
    const { proxy: nowhere, finish: finishNowhere } = await capture('http://127.0.0.1:9');
    expect((await request(`${nowhere.url}/v1/messages`, { method: 'POST', body: '{}' })).statusCode).toBe(502);
    await sleep(200);
    for (const [p, done] of [[proxy, finish], [viaReset, finishReset], [nowhere, finishNowhere]] as const) {
      const calls = await done();
      const frames: Record<string, string[]> = {};
      for await (const f of readWireFrames(p.wirePath)) (frames[f.c] ??= []).push(f.k);
      expect(Object.keys(frames).sort()).toEqual(calls.map((c) => c.call_id).sort());
      for (const kinds of Object.values(frames)) {
        expect(kinds.filter((k) => k === 'x')).toHaveLength(1);
        expect(kinds.at(-1)).toBe('x');
        expect(kinds[0]).toBe('q');
      }
    }
  });

  it('capture directories are created owner-only (0700), the wire log 0600', async () => {
    const model = await startScriptedModel();
    cleanups.push(() => model.close());
    const out = join(tmp.path, 'private', 'nested', 'capture');
    const { proxy, done } = await startProxyPipeline({ upstream: model.url, outDir: out, wireTrace: 'full' });
    await proxy.close();
    await done;
    for (const dir of [join(tmp.path, 'private'), join(tmp.path, 'private', 'nested'), out, join(out, 'raw')]) expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(out, 'raw', 'wire.frames'))).mode & 0o777).toBe(0o600);
  });
});

async function allBytes(dir: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}
