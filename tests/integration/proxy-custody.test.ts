/**
 * Key custody (issue 47): the client holds a stand-in, the proxy puts the real key on the upstream request, a request
 * without the stand-in is refused and recorded; and an upstream that echoes what it received — headers, query,
 * userinfo, error JSON, a redirect, SSE split across chunks, a gzip body, WebSocket events — leaves no forwarded
 * secret in what the client got or in any byte the proxy wrote.
 */
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { readCallsLazily } from '../../src/sources/archive/calls-reader.js';
import { WebSocket, WebSocketServer } from 'ws';
import { bypassMessage, proxyAdmission } from '../../src/pipelines/collect/custody.js';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import { startCapture } from '../support/capture.js';
import { startUpstream } from '../support/http.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-custody');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KEY = 'canary-REALKEY-5f1c9a7e2b';
const STAND_IN = 'roller-standin-TESTONLY0001';
const PASSWORD = 'UPSTREAMpassword77';
const QUERY_SECRET = 'UPSTREAMquerykey88';

async function allBytes(dir: string): Promise<string> {
  let out = '';
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out += (await readFile(join(e.parentPath, e.name))).toString('latin1');
  }
  return out;
}

function expectNoSecret(text: string): void {
  for (const s of [KEY, PASSWORD, QUERY_SECRET, Buffer.from(`user:${PASSWORD}`).toString('base64')]) expect(text).not.toContain(s);
}

/** An upstream that echoes everything it received, every way an upstream can say something back. */
async function echoingUpstream() {
  const seen: { url: string; headers: Record<string, unknown> }[] = [];
  const up = await startUpstream(async (req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const echo = JSON.stringify({ url: req.url, headers: req.headers });
    const path = (req.url ?? '').split('?')[0];
    if (path === '/v1/redirect') {
      res.writeHead(307, { location: `https://elsewhere.example/?key=${req.headers['x-api-key']}`, 'www-authenticate': `Bearer realm="${req.headers['x-api-key']}"` });
      return res.end();
    }
    if (path === '/v1/error') {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${req.headers['x-api-key']}; echo ${echo}` } }));
    }
    if (path === '/v1/gzip') {
      res.writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      return res.end(gzipSync(Buffer.from(JSON.stringify({ error: { message: `echo ${echo}` } }))));
    }
    // SSE with the key split across two writes, a pause between them.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const key = String(req.headers['x-api-key'] ?? '');
    res.write(`event: message_start\ndata: {"text":"key is ${key.slice(0, 9)}`);
    await sleep(30);
    res.write(`${key.slice(9)} and auth ${req.headers.authorization}"}\n\n`);
    res.end(`data: ${JSON.stringify({ echo })}\n\n`);
  });
  cleanups.push(() => up.close());
  return { up, seen };
}

describe('key custody', () => {
  it("a harness that called anything but its proxy with the stand-in is named from the attempt's calls.jsonl", async () => {
    const { up } = await echoingUpstream();
    const outDir = join(tmp.path, 'admission');
    const { proxy, done } = await startProxyPipeline({ upstream: up.url, outDir, wireTrace: 'off', credential: { standIn: STAND_IN, key: KEY } });
    for (const key of [STAND_IN, 'planted-by-a-project-setting']) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key }, body: '{"model":"m"}' });
      await res.body.text();
    }
    // A prompt that quotes the refusal's code is no refusal: the call's own errors say which were refused.
    await (await request(`${proxy.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': STAND_IN }, body: '{"model":"m","messages":[{"role":"user","content":"why ROLLER_CREDENTIAL_REFUSED?"}]}' })).body.text();
    // A probe of what server this is (no model protocol's path), sent without a key as Hermes sends it: refused, and
    // counted apart — it says nothing of where the harness's model calls go.
    await (await request(`${proxy.url}/api/tags`)).body.text();
    await proxy.close();
    await done;
    const admission = proxyAdmission(await readCallsLazily(join(outDir, 'calls.jsonl')));
    expect(admission).toEqual({ calls: 4, refused: 1, refusedProbes: 1 });
    expect(bypassMessage(admission, ['.claude/settings.json'])).toMatch(/^1 request\(s\) reached roller's proxy without the stand-in .*\.claude\/settings\.json/);
    expect(bypassMessage({ calls: 3, refused: 0, refusedProbes: 1 }, [])).toBeUndefined();
    expect(bypassMessage(proxyAdmission([]), [])).toMatch(/^the harness made no model call through roller's recording proxy/);
  });

  it('the stand-in is swapped for the real key; a request without it is refused (401) and recorded, never forwarded', async () => {
    const { up, seen } = await echoingUpstream();
    const capture = await startCapture(tmp.path, up.url, { credential: { standIn: STAND_IN, key: KEY } });
    cleanups.push(() => capture.finish());
    const base = capture.proxy.url;

    const ok = await request(`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': STAND_IN, authorization: 'Bearer planted-other-credential' }, body: '{}' });
    await ok.body.text();
    expect(seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(seen[0]!.headers.authorization).toBeUndefined(); // a credential without the stand-in is not forwarded

    const bearer = await request(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${STAND_IN}` }, body: '{}' });
    await bearer.body.text();
    expect(seen[1]!.headers.authorization).toBe(`Bearer ${KEY}`);

    for (const headers of [{}, { 'x-api-key': 'somebody-elses-key' }, { authorization: 'Bearer not-the-stand-in' }]) {
      const refused = await request(`${base}/v1/messages`, { method: 'POST', headers, body: '{"model":"m"}' });
      expect(refused.statusCode).toBe(401);
      expect(JSON.parse(await refused.body.text())).toMatchObject({ error: { type: 'roller_credential_refused' } });
    }
    expect(seen).toHaveLength(2);
    const calls = await capture.finish();
    expect(calls).toHaveLength(5);
    const refusedCalls = calls.filter((c) => c.errors.some((e) => e.code === 'ROLLER_CREDENTIAL_REFUSED'));
    expect(refusedCalls).toHaveLength(3);
    for (const c of refusedCalls) expect(c.execution_status).not.toBe('completed'); // the proxy answered it: no model response
    expect(refusedCalls[1]!.dropped_request_headers).toContain('x-api-key');
    expectNoSecret(await allBytes(capture.outDir));
  });

  it('an upstream echoing headers, query and userinfo (redirect, error JSON, SSE split across chunks, gzip) leaves no forwarded secret anywhere', async () => {
    const { up } = await echoingUpstream();
    const upstream = `http://user:${PASSWORD}@127.0.0.1:${new URL(up.url).port}/?api_key=${QUERY_SECRET}`;
    const capture = await startCapture(tmp.path, upstream, { credential: { standIn: STAND_IN, key: KEY } });
    cleanups.push(() => capture.finish());
    const got: string[] = [];
    for (const path of ['/v1/messages', '/v1/error', '/v1/redirect', '/v1/gzip']) {
      const res = await request(`${capture.proxy.url}${path}`, { method: 'POST', headers: { 'x-api-key': STAND_IN, 'accept-encoding': 'gzip' }, body: '{"model":"m","stream":true}' });
      got.push(JSON.stringify(res.headers), await res.body.text());
    }
    const client = got.join('\n');
    expectNoSecret(client);
    expect(client).toContain('REDACTED'); // the echoes arrived, masked
    expect(client).toContain('"message":"echo'); // the gzip body reached the client decoded
    const calls = await capture.finish();
    expect(calls).toHaveLength(4);
    expectNoSecret(await allBytes(capture.outDir));
    expectNoSecret(JSON.stringify(calls));
  });

  it('WebSocket: the upgrade carries the real key upstream, the upstream echoing it leaves no trace; without the stand-in it is refused', async () => {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    cleanups.push(async () => {
      for (const c of server.clients) c.terminate();
      server.close();
    });
    const heard: string[] = [];
    server.on('connection', (ws, req) => {
      heard.push(String(req.headers.authorization));
      ws.on('message', () => {
        ws.send(JSON.stringify({ type: 'response.created', echo: req.headers.authorization }));
        ws.send(JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', output: [], usage: { input_tokens: 1, output_tokens: 1 } } }));
      });
    });
    const port = (server.address() as AddressInfo).port;
    const capture = await startCapture(tmp.path, `http://127.0.0.1:${port}/v1`, { credential: { standIn: STAND_IN, key: KEY } });
    cleanups.push(() => capture.finish());
    const wsUrl = `${capture.proxy.url.replace('http', 'ws')}/responses`;

    const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${STAND_IN}` } });
    await once(ws, 'open');
    const frames: string[] = [];
    ws.on('message', (d: Buffer) => frames.push(d.toString()));
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: [] }));
    while (!frames.some((f) => f.includes('response.completed'))) await sleep(10);
    ws.close();
    expect(heard).toEqual([`Bearer ${KEY}`]);
    expectNoSecret(frames.join('\n'));
    expect(frames.join('\n')).toContain('REDACTED');

    const refused = new WebSocket(wsUrl, { headers: { authorization: 'Bearer someone-else' } });
    const [, res] = (await once(refused, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).toBe(401);
    expect(heard).toHaveLength(1);
    const calls = await capture.finish();
    expect(calls.some((c) => c.errors.some((e) => e.code === 'ROLLER_CREDENTIAL_REFUSED'))).toBe(true);
    expectNoSecret(await allBytes(capture.outDir));
  });
});

describe('an OpenAI-protocol API base (issue 60): the SDK base as the provider names it, its headers added', () => {
  it("the harness's /v1 is the base's own, the config's headers reach the upstream, the key goes in the header the client used", async () => {
    const seen: { url: string; headers: Record<string, unknown> }[] = [];
    const up = await startUpstream((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}');
    });
    cleanups.push(() => up.close());
    const outDir = join(tmp.path, 'sdk-base');
    const { proxy, done } = await startProxyPipeline({ upstream: `${up.url}/api/v1?tenant=t1`, clientBasePath: '/v1', upstreamHeaders: { 'HTTP-Referer': 'https://roller.test', 'X-Title': 'eval' }, outDir, wireTrace: 'off', credential: { standIn: STAND_IN, key: KEY } });
    for (const path of ['/v1/chat/completions', '/chat/completions']) {
      const res = await request(`${proxy.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${STAND_IN}`, 'x-title': 'from the harness' }, body: '{"model":"m","messages":[]}' });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    await proxy.close();
    await done;
    // With or without the SDK's /v1, the request lands under the configured base, its query kept.
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/chat/completions?tenant=t1', '/api/v1/chat/completions?tenant=t1']);
    for (const s of seen) expect(s.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'http-referer': 'https://roller.test', 'x-title': 'eval' });
    const calls = await readCallsLazily(join(outDir, 'calls.jsonl'));
    expect(calls.map((c) => [c.path, c.upstream_path, c.protocol])).toEqual([
      ['/v1/chat/completions', '/api/v1/chat/completions?tenant=t1', 'openai-chat-completions'],
      ['/chat/completions', '/api/v1/chat/completions?tenant=t1', 'openai-chat-completions'],
    ]);
    expectNoSecret(await allBytes(outDir));
  });
});
