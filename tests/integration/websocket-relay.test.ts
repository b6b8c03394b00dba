import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { Call as CallSchema, checkValue } from '../../src/schemas/index.js';
import { readRawResponse } from '../../src/sources/proxy/index.js';
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
    const started = Date.now();
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/responses`);
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).toBe(405);
    expect(Date.now() - started).toBeLessThan(1000);
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
});
