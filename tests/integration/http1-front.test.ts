import { afterEach, describe, expect, it } from 'vitest';
import type { Call } from '../../src/schemas/index.js';
import { readWireFrames, type RecordingProxyOptions } from '../../src/sources/proxy/index.js';
import { startCapture } from '../support/capture.js';
import { startUpstream } from '../support/http.js';
import { RawClient, rawRequest, type RawResponse } from '../support/raw-http.js';
import { useTempDir } from '../support/temp-dir.js';

/**
 * The proxy's HTTP/1.1 front (src/sources/proxy/http1-front.ts) over real sockets: what it serves itself must reach the
 * client as node's server would have sent it, and be recorded the same; what it hands to node must be served by node,
 * on the same connection.
 */
const tmp = useTempDir('front');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An upstream with one response per path; it keeps the bodies it received. */
async function upstream() {
  const received: { method: string; path: string; body: string }[] = [];
  const server = await startUpstream((req, res, body) => {
    received.push({ method: req.method!, path: req.url!, body: body.toString() });
    const path = (req.url ?? '').split('?')[0];
    if (path === '/stream') {
      // No length: the body streams in pieces, as a model's SSE does.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_stream' });
      res.write('data: one\n\n');
      setTimeout(() => res.write('data: two\n\n'), 5);
      setTimeout(() => res.end('data: [DONE]\n\n'), 10);
    } else if (path === '/nodate') {
      res.sendDate = false;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
      res.end('{}');
    } else if (path === '/empty') {
      res.writeHead(204, { 'request-id': 'req_empty' });
      res.end();
    } else {
      const text = JSON.stringify({ echo: body.length, method: req.method });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': 'req_sized', date: 'Tue, 01 Dec 2026 00:00:00 GMT' });
      res.end(req.method === 'HEAD' ? undefined : text);
    }
  });
  cleanups.push(server.close);
  return { url: server.url, received };
}

async function proxyTo(url: string, extra: Partial<RecordingProxyOptions> = {}) {
  const capture = await startCapture(tmp.path, url, extra);
  cleanups.push(async () => void (await capture.finish()));
  return capture;
}

/** A response without the Date it was stamped with (node's and the front's can be a second apart). */
const headWithoutDate = (r: RawResponse) => ({ status: r.status, headers: r.headers.map(([n, v]) => [n, n.toLowerCase() === 'date' ? '' : v]), chunked: r.chunked, body: r.body.toString() });

describe('the HTTP/1.1 front', () => {
  it.each([
    ['a streamed response (no length: chunked)', 'POST', '/stream'],
    ['a sized response (its length, its Date)', 'POST', '/sized?x=1'],
    ['a 204 (no body)', 'POST', '/empty'],
    ['a response without Date (one is added)', 'POST', '/nodate'],
    ['a HEAD (no body, the length kept)', 'HEAD', '/sized'],
  ])('answers %s with the head and body node sends, and records the call the same', async (_what, method, path) => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const body = method === 'HEAD' ? '' : JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    const client = await RawClient.connect(proxy.url);
    client.write(rawRequest(method, path, body)); // served by the front
    const front = await client.response(method);
    client.write(rawRequest(method, path, body, { chunked: true })); // a chunked body: node serves it, on the same connection
    const node = await client.response(method);
    expect(headWithoutDate(front)).toEqual(headWithoutDate(node));
    // One Date: the upstream's (node's test server stamps one), never a second one added.
    expect(front.headers.filter(([n]) => n.toLowerCase() === 'date')).toHaveLength(1);
    expect(up.received).toEqual([
      { method, path, body },
      { method, path, body },
    ]);
    client.socket.destroy();
    const calls = await finish();
    expect(calls).toHaveLength(2);
    const comparable = (c: Call) => ({ ...c, call_id: undefined, seq: undefined, started_at: undefined, first_byte_at: undefined, ended_at: undefined, response_offset: undefined, response_length: undefined });
    expect(comparable(calls[0]!)).toEqual(comparable(calls[1]!));
    expect(calls[0]!.http_status).toBe(front.status);
  });

  it('keeps the connection for the next request, and answers pipelined requests in order, each recorded with its body', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    client.write(rawRequest('POST', '/sized', '{"n":1}') + rawRequest('POST', '/stream', '{"n":2}'));
    const first = await client.response();
    const second = await client.response();
    expect(JSON.parse(first.body.toString())).toEqual({ echo: 7, method: 'POST' });
    expect(second.body.toString()).toBe('data: one\n\ndata: two\n\ndata: [DONE]\n\n');
    expect(first.headers).toContainEqual(['Connection', 'keep-alive']);
    client.write(rawRequest('POST', '/sized', '{"n":3}'));
    expect((await client.response()).status).toBe(200);
    expect(client.isClosed).toBe(false);
    client.socket.destroy();
    const calls = await finish();
    expect(calls.map((c) => c.context)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(up.received.map((r) => r.body)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  });

  it('a client that pipelines megabytes is read in turn (paused while a response is on its way), every request answered', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    const bodies = Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, pad: 'p'.repeat(60_000) }));
    client.write(bodies.map((b, i) => rawRequest('POST', i % 2 ? '/stream' : '/sized', b)).join(''));
    for (let i = 0; i < bodies.length; i++) expect((await client.response()).status).toBe(200);
    client.socket.destroy();
    const calls = await finish();
    expect(calls.map((c) => (c.context as { i: number }).i)).toEqual(bodies.map((_, i) => i));
    expect(up.received.map((r) => r.body)).toEqual(bodies);
  });

  it('a body in many small writes, and a head split mid-line, arrive whole', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    const bytes = rawRequest('POST', '/sized', JSON.stringify({ text: 'x'.repeat(3000) }));
    for (let i = 0; i < bytes.length; i += 700) {
      client.write(bytes.slice(i, i + 700));
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(JSON.parse((await client.response()).body.toString()).echo).toBe(Buffer.byteLength(bytes.slice(bytes.indexOf('\r\n\r\n') + 4)));
    client.socket.destroy();
    const [call] = await finish();
    expect(call!.context).toEqual({ text: 'x'.repeat(3000) });
  });

  it('connection: close gets Connection: close and the connection ends after the response', async () => {
    const up = await upstream();
    const { proxy } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    client.write(rawRequest('POST', '/sized', '{}', { headers: ['connection: close'] }));
    const r = await client.response();
    expect(r.headers).toContainEqual(['Connection', 'close']);
    await client.untilClosed();
  });

  it('moves a connection to node at the first request it does not serve, and node serves the rest of it', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    client.write(rawRequest('POST', '/sized', '{"n":1}'));
    await client.response();
    client.write(rawRequest('POST', '/sized', '{"n":2}', { chunked: true }));
    await client.response();
    client.write(rawRequest('POST', '/stream', '{"n":3}'));
    expect((await client.response()).chunked).toBe(true);
    client.socket.destroy();
    expect((await finish()).map((c) => c.context)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('leaves to node what node refuses: a head over 16 KB (431), no Host (400)', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const big = await RawClient.connect(proxy.url);
    big.write(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(17 << 10)}\r\n\r\n`);
    expect((await big.response('GET')).status).toBe(431);
    const noHost = await RawClient.connect(proxy.url);
    noHost.write('GET / HTTP/1.1\r\ncontent-length: 0\r\n\r\n');
    expect((await noHost.response('GET')).status).toBe(400);
    expect(await finish()).toEqual([]);
    expect(up.received).toEqual([]);
  });

  it('a body over the limit gets the 413, its rest is read and dropped, and the connection carries on', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url, { maxRequestBytes: 1000 });
    const client = await RawClient.connect(proxy.url);
    const big = JSON.stringify({ text: 'y'.repeat(5000) });
    const bytes = rawRequest('POST', '/sized', big);
    client.write(bytes.slice(0, 600));
    await new Promise((r) => setTimeout(r, 10));
    client.write(bytes.slice(600));
    const r = await client.response();
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body.toString()).error.type).toBe('roller_request_too_large');
    client.write(rawRequest('POST', '/sized', '{"after":true}'));
    expect((await client.response()).status).toBe(200);
    client.socket.destroy();
    const calls = await finish();
    expect(calls).toHaveLength(2);
    expect(calls[0]!.errors.map((e) => e.code)).toContain('ROLLER_REQUEST_TOO_LARGE');
    expect(calls[1]!.context).toEqual({ after: true });
    expect(up.received.map((x) => x.body)).toEqual(['{"after":true}']);
  });

  it('a client that leaves mid-body is recorded as an abort before the body ended; nothing is forwarded', async () => {
    const up = await upstream();
    const { proxy, finish } = await proxyTo(up.url);
    const client = await RawClient.connect(proxy.url);
    client.write('POST /sized HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"partial":');
    await new Promise((r) => setTimeout(r, 20));
    client.socket.destroy();
    const [call] = await finish();
    expect(call!.context).toBeNull();
    const frames: { k: string; m: unknown }[] = [];
    for await (const f of readWireFrames(proxy.wirePath)) frames.push({ k: f.k, m: f.m });
    expect(frames[0]).toMatchObject({ k: 'q', m: { body_omitted: 'the client aborted before the body ended' } });
    expect(frames.at(-1)).toMatchObject({ k: 'x', m: { client_aborted: true } });
    expect(up.received).toEqual([]);
  });

  it('times an idle connection and a client stalled mid-body, never a response on its way', async () => {
    const slow = await startUpstream((_req, res) => setTimeout(() => res.end('{"late":true}'), 700));
    cleanups.push(slow.close);
    const { proxy, finish } = await proxyTo(slow.url, { keepAliveMs: 250 });
    const waiting = await RawClient.connect(proxy.url);
    waiting.write(rawRequest('POST', '/think', '{}'));
    expect((await waiting.response()).body.toString()).toBe('{"late":true}'); // 700 ms of silence, not cut at 250
    expect(waiting.isClosed).toBe(false);
    await waiting.untilClosed(); // then idle: cut
    const stalled = await RawClient.connect(proxy.url);
    stalled.write('POST /think HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n{"half":');
    await stalled.untilClosed();
    const calls = await finish();
    expect(calls).toHaveLength(2);
    expect(calls[0]!.context).toEqual({});
    expect(calls[1]!.context).toBeNull();
  });

  it("close() lets a response on its way finish, then ends every connection, the front's and node's", async () => {
    const received: string[] = [];
    const slow = await startUpstream((req, res, body) => {
      received.push(body.toString());
      setTimeout(() => res.end('{"done":true}'), req.url === '/slow' ? 300 : 0);
    });
    cleanups.push(slow.close);
    const { proxy, finish } = await proxyTo(slow.url, { closeGraceMs: 30_000 });
    const front = await RawClient.connect(proxy.url);
    front.write(rawRequest('POST', '/fast', '{"n":1}'));
    await front.response();
    const node = await RawClient.connect(proxy.url);
    node.write(rawRequest('POST', '/fast', '{"n":2}', { chunked: true }));
    await node.response();
    const busy = await RawClient.connect(proxy.url);
    busy.write(rawRequest('POST', '/slow', '{"n":3}'));
    while (received.length < 3) await new Promise((r) => setTimeout(r, 5));
    const closing = finish();
    // The response under way when close() came is delivered whole, on a connection that then ends.
    const last = await busy.response();
    expect(last.body.toString()).toBe('{"done":true}');
    expect(last.headers).toContainEqual(['Connection', 'keep-alive']);
    const calls = await closing;
    await Promise.all([front.untilClosed(), node.untilClosed(), busy.untilClosed()]);
    expect(calls.map((c) => [c.context, c.execution_status])).toEqual([
      [{ n: 1 }, 'completed'],
      [{ n: 2 }, 'completed'],
      [{ n: 3 }, 'completed'],
    ]);
  });
});
