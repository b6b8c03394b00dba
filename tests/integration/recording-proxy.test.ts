import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { init as zstdInit, compress as zstdCompress } from '@bokuweb/zstd-wasm';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Call as CallSchema, checkValue, type Call } from '../../src/schemas/index.js';
import { startRecordingProxy } from '../../src/pipelines/proxy.js';
import { readRawResponse, readWireFrames, type RecordingProxy } from '../../src/sources/proxy/index.js';
import { startScriptedModel, type ScriptedModelServer } from '../../src/sources/scripted-model/index.js';
import { decodeSseChunks } from '../../src/transforms/protocols/index.js';
import { collect, startUpstream } from '../support/http.js';
import { startCapture } from '../support/capture.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy');
// Distinctive dummies (never real-looking keys): the scans below look for them in every file written.
const DUMMY_KEYS = ['dummy-x-api-key-0123456789abcdef', 'Bearer dummy-bearer-token-fedcba9876543210', 'session=DUMMY-cookie-value-42'];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function harness(upstreamUrl: string, extra: Partial<Parameters<typeof startRecordingProxy>[0]> = {}) {
  const capture = await startCapture(tmp.path, upstreamUrl, extra);
  cleanups.push(async () => void (await capture.finish()));
  return capture;
}

async function withModel(): Promise<ScriptedModelServer> {
  const model = await startScriptedModel();
  cleanups.push(() => model.close());
  return model;
}

const secretHeaders = { authorization: DUMMY_KEYS[1]!, 'x-api-key': DUMMY_KEYS[0]!, cookie: DUMMY_KEYS[2]! };

async function post(proxy: RecordingProxy, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...secretHeaders, ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, bytes };
}

async function allFilesText(dir: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}

const prompts = {
  'anthropic-messages': ['/v1/messages?beta=true', { model: 'claude-x', stream: true, max_tokens: 100, thinking: { type: 'adaptive' }, tools: [{ name: 'Agent', input_schema: { type: 'object', properties: { prompt: {}, run_in_background: {} } } }], messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: '[MAIN:single] delegate please' }] }] }],
  'openai-chat-completions': ['/v1/chat/completions', { model: 'gpt-x', stream: true, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'task', parameters: { type: 'object' } } }], messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: '[MAIN:single] go' }] }],
  'openai-responses': ['/v1/responses', { model: 'gpt-r', stream: true, reasoning: { effort: 'low' }, tools: [{ type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn_agent', parameters: { type: 'object' } }] }], input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: '[MAIN:single] go' }] }] }],
} as const;

describe('recording proxy against the scripted model', () => {
  it.each(Object.entries(prompts))('%s: the client gets the stream, the call records it exactly', async (protocol, [path, body]) => {
    const model = await withModel();
    const { proxy, outDir, finish } = await harness(model.url);
    const res = await post(proxy, path, body, { 'x-roller-run-id': 'run-77' });
    expect(res.status).toBe(200);
    expect(res.headers['request-id']).toMatch(/^req_/); // response headers pass back
    const [call] = await finish();
    expect(checkValue(CallSchema, call)).toEqual([]);
    expect(call).toMatchObject({ protocol, path, upstream_path: path, http_status: 200, execution_status: 'completed', response_capture_status: 'complete', capture_status: 'complete' });
    expect(call!.context).toEqual(body);
    expect(call!.native_identity).toEqual({ run_id: 'run-77' });
    expect(call!.dropped_request_headers).toEqual(['x-roller-run-id']);
    // What the client received, decoded independently, is the call's output; the raw frames are those bytes.
    const clientView = decodeSseChunks(protocol as Call['protocol'], [res.bytes]);
    expect(call!.output).toEqual(clientView.output);
    expect(call!.response_id).toBe(clientView.responseId);
    expect(call!.tool_refs.length).toBe(1);
    expect(Buffer.concat(await collect(readRawResponse(join(outDir, call!.response_path!), call!.call_id))).equals(res.bytes)).toBe(true);
    // Credentials reached no file.
    const written = await allFilesText(outDir);
    for (const key of DUMMY_KEYS) expect(written).not.toContain(key.split(' ').pop());
  });

  it('records non-streaming JSON responses too', async () => {
    const model = await withModel();
    const { proxy, finish } = await harness(model.url);
    const res = await post(proxy, '/v1/messages', { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: '[HELLO]' }] });
    const [call] = await finish();
    expect(JSON.parse(res.bytes.toString())).toEqual(call!.output);
    expect(call!.execution_status).toBe('completed');
    expect((call!.output as { content: { text: string }[] }).content[0]!.text).toBe('Hello from the scripted model.');
  });

  it('decodes gzip and zstd request bodies for the record and forwards the original bytes', async () => {
    await zstdInit();
    const seen: { encoding: string | undefined; length: number }[] = [];
    const body = { model: 'm', stream: false, input: '[HELLO] compressed' };
    const upstream = await startUpstream((req, res, raw) => {
      seen.push({ encoding: req.headers['content-encoding'], length: raw.length });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'resp_1', object: 'response', model: 'm', status: 'completed', output: [] }));
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    const gz = gzipSync(Buffer.from(JSON.stringify(body)));
    const zs = Buffer.from(zstdCompress(Buffer.from(JSON.stringify(body)), 3));
    await post(proxy, '/v1/responses', gz, { 'content-encoding': 'gzip' });
    await post(proxy, '/v1/responses', zs, { 'content-encoding': 'zstd' });
    const calls = await finish();
    expect(calls.map((c) => c.context)).toEqual([body, body]);
    expect(seen).toEqual([
      { encoding: 'gzip', length: gz.length },
      { encoding: 'zstd', length: zs.length },
    ]);
  });

  it('keeps a client connection open across a pause longer than node\'s default keep-alive (a tool run between calls)', async () => {
    const upstream = await startUpstream((_req, res) => res.end('{"ok":true}'));
    cleanups.push(() => upstream.close());
    const { proxy } = await harness(upstream.url);
    const socket = connect(proxy.port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.setEncoding('latin1').on('data', (d: string) => (received += d));
    const ask = async (n: number) => {
      socket.write('POST /v1/other HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
      while ((received.match(/\{"ok":true\}/g) ?? []).length < n) await new Promise((r) => setTimeout(r, 10));
    };
    await ask(1);
    expect(received).toMatch(/keep-alive: timeout=120/i);
    await new Promise((r) => setTimeout(r, 5_500)); // past node's default keepAliveTimeout (5 s)
    expect(socket.readyState).toBe('open');
    await ask(2);
    socket.destroy();
  }, 15_000);

  it('forwards everything but hop-by-hop and roller headers; records identity, never credentials', async () => {
    let upstreamHeaders: Record<string, unknown> = {};
    let upstreamTarget = '';
    const upstream = await startUpstream((req, res) => {
      upstreamHeaders = req.headers;
      upstreamTarget = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_upstream_1' });
      res.end('{"type":"message","id":"msg_1","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
    });
    cleanups.push(upstream.close);
    const { proxy, outDir, finish } = await harness(`${upstream.url}/prefix`, { correlationHeaders: { 'x-opencode-corr': 'run_id' } });
    const res = await post(proxy, '/v1/messages?beta=true', { model: 'm', messages: [] }, {
      'x-claude-code-session-id': 'sess-9',
      'x-claude-code-agent-id': 'agent-3',
      'x-roller-thread-id': 'thr-1',
      'x-opencode-corr': 'corr-5',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'context-management-2025-06-27,effort-2025-11-24',
    });
    expect(res.headers['request-id']).toBe('req_upstream_1');
    // Claude Code's betas reach the model API as sent (CONFORMANCE B13.2): its bodies use fields only they enable.
    expect(upstreamTarget).toBe('/prefix/v1/messages?beta=true');
    expect(upstreamHeaders).toMatchObject({ authorization: DUMMY_KEYS[1], 'x-api-key': DUMMY_KEYS[0], 'x-claude-code-session-id': 'sess-9', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-management-2025-06-27,effort-2025-11-24' });
    expect(Object.keys(upstreamHeaders).filter((h) => h.startsWith('x-roller-') || h === 'x-opencode-corr')).toEqual([]);
    const [call] = await finish();
    expect(call!.upstream_path).toBe('/prefix/v1/messages?beta=true');
    expect(call!.native_identity).toEqual({ session_id: 'sess-9', agent_id: 'agent-3', thread_id: 'thr-1', run_id: 'corr-5' });
    expect(call!.dropped_request_headers).toEqual(['x-opencode-corr', 'x-roller-thread-id']);
    const written = await allFilesText(outDir);
    for (const key of DUMMY_KEYS) expect(written).not.toContain(key.split(' ').pop());
  });
});

describe('faults end as recorded statuses', () => {
  it('an unreachable upstream gives the client a clear 502 and records a failed call', async () => {
    const { proxy, finish } = await harness('http://127.0.0.1:9');
    const res = await post(proxy, '/v1/messages', { model: 'm', messages: [] });
    expect(res.status).toBe(502);
    expect(JSON.parse(res.bytes.toString()).error.message).toContain('could not be reached');
    const [call] = await finish();
    expect(call).toMatchObject({ execution_status: 'failed', response_capture_status: 'missing', http_status: null });
    expect(call!.errors[0]!.code).toBe('ROLLER_UPSTREAM_FAILED');
  });

  it('a request target that is not a path (OPTIONS *) gets a 400 that says why and is logged whole: its request frame, then its end', async () => {
    const model = await withModel();
    const { proxy, finish } = await harness(model.url);
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    await once(socket, 'connect');
    let reply = '';
    socket.on('data', (chunk: Buffer) => (reply += chunk.toString('latin1')));
    socket.end('OPTIONS * HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello');
    await once(socket, 'close');
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('roller_bad_request_target');
    expect(model.answered).toBe(0);
    const [call] = await finish();
    expect(call).toMatchObject({ execution_status: 'failed', response_capture_status: 'missing', http_status: null, path: '*' });
    expect(call!.status_reasons.execution_status).toContain('neither a path nor an http(s) URL');
    const frames: { k: string; body: string }[] = [];
    for await (const f of readWireFrames(proxy.wirePath)) if (f.c === call!.call_id) frames.push({ k: f.k, body: f.body.toString('latin1') });
    expect(frames).toEqual([
      { k: 'q', body: '' },
      { k: 'x', body: '' },
    ]);
  });

  it('a wire log behind the disk holds requests and response reads, and every call is still logged whole and in order', async () => {
    // A mark of one byte: every append goes over it, so each request is logged and waits for the disk before it is
    // forwarded, and each response chunk pauses the upstream read until its frame is written.
    const model = await withModel();
    const { proxy, outDir, finish } = await harness(model.url, { wireHighWaterBytes: 1 });
    const [path, body] = prompts['anthropic-messages'];
    const replies = await Promise.all(Array.from({ length: 8 }, () => post(proxy, path, body)));
    for (const r of replies) expect(r.status).toBe(200);
    const calls = await finish();
    expect(calls).toHaveLength(8);
    const kinds = new Map<string, string>();
    for await (const f of readWireFrames(proxy.wirePath)) kinds.set(f.c, (kinds.get(f.c) ?? '') + f.k);
    const unmatched = replies.map((r) => r.bytes.toString('latin1'));
    for (const call of calls) {
      expect(call).toMatchObject({ execution_status: 'completed', response_capture_status: 'complete' });
      expect(call.context).toEqual(body);
      expect(kinds.get(call.call_id)).toMatch(/^qrd+x$/); // the request, the response head, its bytes, the end
      // Each call's raw response is one client's reply, byte for byte (each reply matched once).
      const raw = Buffer.concat(await collect(readRawResponse(join(outDir, call.response_path!), call.call_id))).toString('latin1');
      expect(unmatched).toContain(raw);
      unmatched.splice(unmatched.indexOf(raw), 1);
    }
  });

  it.each([500, 529])('an upstream %i is passed through and recorded as failed with its error', async (status) => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    const res = await post(proxy, '/v1/messages', { model: 'm', messages: [] });
    expect(res.status).toBe(status);
    const [call] = await finish();
    expect(call).toMatchObject({ http_status: status, execution_status: 'failed', response_capture_status: 'complete' });
    expect(call!.status_reasons.execution_status).toContain('overloaded_error');
  });

  it('an upstream reset mid-stream cuts the client too and records a partial, failed call with what arrived', async () => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_cut","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5}}}\n\n');
      res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    await expect(post(proxy, '/v1/messages', { model: 'm', stream: true, messages: [] })).rejects.toThrow();
    const [call] = await finish();
    expect(call).toMatchObject({ response_id: 'msg_cut', execution_status: 'failed', response_capture_status: 'partial', capture_status: 'partial' });
  });

  it('malformed SSE is kept and flagged as anomalies, not a crash', async () => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {broken\n\ndata: [DONE]\n\n');
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    const res = await post(proxy, '/v1/chat/completions', { model: 'm', stream: true, messages: [] });
    expect(res.status).toBe(200);
    const [call] = await finish();
    expect(call!.response_capture_status).toBe('complete');
    expect(call!.capture_status).toBe('partial');
    expect(call!.errors.some((e) => e.code === 'ROLLER_STREAM_ANOMALY' && e.message.includes('not valid JSON'))).toBe(true);
  });

  it('a client that aborts mid-stream is recorded as interrupted, and the proxy lives on', async () => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: ping\ndata: {"type":"ping"}\n\n');
      const timer = setInterval(() => res.write('event: ping\ndata: {"type":"ping"}\n\n'), 10);
      res.on('close', () => clearInterval(timer));
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    const controller = new AbortController();
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{"stream":true}', signal: controller.signal });
    for await (const _ of res.body) {
      controller.abort();
      break;
    }
    const [call] = await finish();
    expect(call).toMatchObject({ execution_status: 'interrupted', response_capture_status: 'partial' });
  });

  const MESSAGE_START = Buffer.from(
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_long","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n',
  );
  const MESSAGE_END = Buffer.from(
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n',
  );
  it('a long stream with many backpressure pauses leaves no listeners behind on the client response', async () => {
    // 64 KiB chunks overrun the response's 16 KiB buffer, so nearly every write waits for 'drain'.
    const chunk = Buffer.from(`event: ping\ndata: {"type":"ping","pad":"${'x'.repeat(64 * 1024)}"}\n\n`);
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(MESSAGE_START);
      let left = 64;
      const pump = () => {
        while (left-- > 0) if (!res.write(chunk)) return void res.once('drain', pump);
        res.end(MESSAGE_END);
      };
      pump();
    });
    cleanups.push(upstream.close);
    const warnings: string[] = [];
    const onWarning = (w: Error) => void (w.name === 'MaxListenersExceededWarning' && warnings.push(w.message));
    process.on('warning', onWarning);
    try {
      const { proxy, finish } = await harness(upstream.url);
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{"stream":true}' });
      let received = 0;
      for await (const part of res.body) {
        received += (part as Buffer).length;
        await new Promise((r) => setImmediate(r)); // a client a little slower than the proxy
      }
      expect(received).toBe(MESSAGE_START.length + 64 * chunk.length + MESSAGE_END.length);
      const [call] = await finish();
      expect(call!.execution_status).toBe('completed');
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('a client that stops reading makes the proxy stop reading upstream (memory stays bounded)', async () => {
    let written = 0;
    let upstreamRes: import('node:http').ServerResponse | undefined;
    const chunk = Buffer.from(`event: ping\ndata: {"type":"ping","pad":"${'x'.repeat(64 * 1024)}"}\n\n`);
    const upstream = await startUpstream((_req, res) => {
      upstreamRes = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (written < 512 << 20) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    cleanups.push(upstream.close);
    const { proxy, finish } = await harness(upstream.url);
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: '{"stream":true}' });
    // Read nothing for a while: the upstream must stall far below the 512 MiB it wants to send.
    await new Promise((r) => setTimeout(r, 1500));
    expect(written).toBeLessThan(32 << 20);
    res.body.destroy();
    upstreamRes?.destroy();
    const [call] = await finish();
    expect(call!.execution_status).toBe('interrupted');
  });
});
