import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { Call as CallSchema, checkValue } from '../../src/schemas/index.js';
import { readRawResponse, readWireFrames } from '../../src/sources/proxy/index.js';
import { encodeFrame, OPCODE } from '../../src/sources/proxy/websocket-frames.js';
import { startScriptedModel } from '../../src/sources/scripted-model/index.js';
import { ResponsesDecoder } from '../../src/transforms/protocols/index.js';
import { collect, startUpstream } from '../support/http.js';
import { startCapture } from '../support/capture.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('ws');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function setup(upstreamUrl: string, websocket = true) {
  const capture = await startCapture(tmp.path, upstreamUrl, { websocket });
  cleanups.push(async () => void (await capture.finish()));
  return capture;
}

const create = (text: string) => ({
  type: 'response.create',
  model: 'gpt-ws',
  tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
});

/** Send one response.create and collect the event frames up to the terminal one. */
// ws emits a burst of frames in one tick: listen before sending, never with once() in a loop.
function roundTrip(ws: WebSocket, payload: object): Promise<Record<string, unknown>[]> {
  const events: Record<string, unknown>[] = [];
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      const e = JSON.parse(data.toString()) as Record<string, unknown>;
      events.push(e);
      if (e.type === 'response.completed' || e.type === 'error') {
        ws.off('message', onMessage);
        resolve(events);
      }
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify(payload));
  });
}

describe('Responses over WebSocket through the proxy', () => {
  it('relays every frame and records one call per response.create', async () => {
    const model = await startScriptedModel();
    cleanups.push(() => model.close());
    const { proxy, outDir, finish } = await setup(model.url);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: 'Bearer sk-ws-DUMMY-SECRET', 'x-roller-thread-id': 'thr-ws' } });
    await once(ws, 'open');
    const first = await roundTrip(ws, create('[HELLO] over websocket'));
    const second = await roundTrip(ws, create('[WRITE] then write'));
    ws.close();
    await once(ws, 'close');
    const calls = await finish();
    expect(calls).toHaveLength(2);
    for (const [i, events] of [first, second].entries()) {
      const call = calls[i]!;
      expect(checkValue(CallSchema, call)).toEqual([]);
      const decoder = new ResponsesDecoder();
      for (const e of events) decoder.frame(e);
      const seen = decoder.finish();
      expect(call).toMatchObject({ protocol: 'openai-responses', http_status: 101, execution_status: 'completed', response_capture_status: 'complete', response_id: seen.responseId });
      expect(call.output).toEqual(seen.output);
      expect(call.native_identity).toEqual({ thread_id: 'thr-ws' });
      const raw = await collect(readRawResponse(join(outDir, call.response_path!), call.call_id));
      expect(raw.map((b) => JSON.parse(b.toString()) as unknown)).toEqual(events);
    }
    expect((calls[1]!.context as { input: unknown[] }).input).toHaveLength(1);
    expect(calls[1]!.tool_refs.map((r) => r.name)).toEqual(['exec_command']);
  });

  it('with websocket disabled, refuses the upgrade at once (no timeout) and HTTP still works', async () => {
    const model = await startScriptedModel();
    cleanups.push(() => model.close());
    const { proxy } = await setup(model.url, false);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).toBe(405);
  });

  it('an upstream that has no WebSocket endpoint: the client gets its status at once', async () => {
    const upstream = await startUpstream((_req, res) => res.writeHead(404).end());
    cleanups.push(upstream.close);
    const { proxy } = await setup(upstream.url);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    ws.on('error', () => {});
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).toBe(404);
  });

  it('a client that disconnects mid-response leaves an interrupted, partial call with what arrived', async () => {
    // An upstream that sends the first events of a response and then never finishes it.
    const upstream = await startUpstream((_req, res) => res.writeHead(404).end());
    cleanups.push(upstream.close);
    const wss = new WebSocketServer({ noServer: true });
    upstream.server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', () => {
          ws.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_stall', object: 'response', model: 'm', status: 'in_progress', output: [] } }));
          ws.send(JSON.stringify({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }));
        }),
      ),
    );
    const { proxy, finish } = await setup(upstream.url);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    await once(ws, 'open');
    const got = new Promise((resolve) => ws.on('message', (d: Buffer) => JSON.parse(d.toString()).sequence_number === 1 && resolve(null)));
    ws.send(JSON.stringify(create('[HELLO]')));
    await got;
    ws.terminate();
    const calls = await finish();
    wss.close();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ response_id: 'resp_stall', execution_status: 'interrupted', response_capture_status: 'partial' });
  });

  /** A ws server upstream that keeps what it hears and sends what it is told. */
  async function wsUpstream() {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    const heard: { data: Buffer; binary: boolean }[] = [];
    const pings: string[] = [];
    let peer: WebSocket | undefined;
    const connected = new Promise<WebSocket>((resolve) =>
      server.on('connection', (ws) => {
        peer = ws;
        ws.on('message', (data: Buffer, binary: boolean) => heard.push({ data, binary }));
        ws.on('ping', (d: Buffer) => pings.push(d.toString()));
        resolve(ws);
      }),
    );
    cleanups.push(async () => {
      for (const c of server.clients) c.terminate();
      server.close();
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, heard, pings, connected, peer: () => peer };
  }

  it('frames pass as they came both ways (fragments, pings, binary, a 3 MB request) and each client message is recorded with its bytes', async () => {
    const upstream = await wsUpstream();
    const { proxy, finish } = await setup(upstream.url);
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    await once(ws, 'open');
    const server = await upstream.connected;
    const toClient: { data: Buffer; binary: boolean }[] = [];
    ws.on('message', (data: Buffer, binary: boolean) => toClient.push({ data, binary }));

    // A request past the size held whole (type first, as Codex and Pi send it), in three fragments with a ping between.
    const big = Buffer.from(JSON.stringify({ type: 'response.create', model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(3 << 20) }] }] }));
    ws.send(big.subarray(0, 1000), { binary: false, fin: false });
    ws.ping('between fragments');
    ws.send(big.subarray(1000, 2 << 20), { binary: false, fin: false });
    ws.send(big.subarray(2 << 20), { binary: false, fin: true });
    const binary = randomBytes(200_000);
    ws.send(binary, { binary: true });
    ws.send(JSON.stringify({ type: 'response.cancel' }));
    while (upstream.heard.length < 3) await new Promise((r) => setTimeout(r, 10));
    expect(upstream.heard.map((m) => [m.binary, m.data.length])).toEqual([[false, big.length], [true, binary.length], [false, 26]]);
    expect(upstream.heard[0]!.data.equals(big)).toBe(true);
    expect(upstream.heard[1]!.data.equals(binary)).toBe(true);
    expect(upstream.pings).toEqual(['between fragments']);

    // The upstream's events, one of them fragmented, then the terminal one.
    server.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_frag', status: 'in_progress', output: [] } }));
    server.send(JSON.stringify({ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }));
    server.send(JSON.stringify({ type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } }));
    const delta = JSON.stringify({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'y'.repeat(100_000) });
    server.send(delta.slice(0, 50), { fin: false });
    server.send(delta.slice(50), { fin: true });
    server.send(JSON.stringify({ type: 'response.output_item.done', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'y'.repeat(100_000) }] } }));
    server.send(JSON.stringify({ type: 'response.completed', response: { id: 'resp_frag', status: 'completed', output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } }));
    while (toClient.length < 6) await new Promise((r) => setTimeout(r, 10));
    expect(toClient[3]!.data.toString()).toBe(delta);
    ws.close();
    await once(ws, 'close');
    const calls = await finish();

    // One call: its context is the 3 MB request, whole; the cancel and the binary message are 'u' frames of it.
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ response_id: 'resp_frag', execution_status: 'completed', errors: [] });
    expect(JSON.stringify(calls[0]!.context)).toBe(big.toString());
    const u: Buffer[] = [];
    for await (const f of readWireFrames(proxy.wirePath)) if (f.k === 'u') u.push(f.body);
    expect(Buffer.concat(u).equals(Buffer.concat([binary, Buffer.from(JSON.stringify({ type: 'response.cancel' }))]))).toBe(true);
  });

  it('a client that breaks the protocol (an unmasked frame) gets close 1002; the upstream is told the client went away', async () => {
    const upstream = await wsUpstream();
    const { proxy } = await setup(upstream.url);
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /v1/responses HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n');
    let got = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
    const server = await upstream.connected;
    const serverClosed = once(server, 'close');
    while (!got.includes('\r\n\r\n')) await new Promise((r) => setTimeout(r, 10));
    expect(got.toString('latin1')).toMatch(/^HTTP\/1\.1 101 .*\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/s);
    got = Buffer.alloc(0);
    socket.write(encodeFrame(OPCODE.text, Buffer.from('{"type":"response.create"}'), false)); // a client's frame must be masked
    await once(socket, 'close');
    expect(got[0]).toBe(0x88); // a close frame
    expect(got.readUInt16BE(2)).toBe(1002);
    const [code] = (await serverClosed) as [number];
    expect(code).toBe(1001);
  });
});
