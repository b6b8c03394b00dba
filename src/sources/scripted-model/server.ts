import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { decodeBody } from '../../transforms/protocols/decode-body.js';
import { conversationOf } from './conversation.js';
import { anthropicEvents } from './encode-anthropic.js';
import { chatChunks, responsesEventObjects, responsesEvents } from './encode-openai.js';
import { WebSocketServer, type WebSocket } from 'ws';
import { admission, presentedKey, providerError } from './provider-errors.js';
import { buildResponse, decide, randomId, type Reply } from './respond.js';
import { DEFAULT_SCRIPT } from './default-script.js';
import { sglangStreamRefusal } from './token-ids.js';
import type { Script } from './script.js';

type Json = Record<string, any>;

export interface ScriptedModelOptions {
  script?: Script;
  host?: string;
  port?: number;
  /** Served as a provider's API: every model request must carry this key (x-api-key or Bearer), else a 401. */
  requireKey?: string;
  /** The model names it serves (a request for another is a 404, as a provider's); absent: any. */
  models?: readonly string[];
  /** Called for every answered model request (for logs and tests). */
  onReply?: (info: { protocol: string; path: string; reply: Reply; response: Json }) => void;
}

export interface ScriptedModelServer {
  readonly url: string;
  readonly port: number;
  /** Model requests answered so far. */
  readonly answered: number;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendRaw(res, status, JSON.stringify(body), headers);
}

/** {KEY} in serialized JSON: the key JSON-\\u-escaped (every character), URL-encoded, base64, and its last 16 characters. */
function keyEchoes(key: string): (text: string) => string {
  const escaped = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const url = [...key].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const spelled = `${escaped} (url ${url}, base64 ${Buffer.from(key).toString('base64')}, ending ${key.slice(-16)})`;
  return (text) => text.split('{KEY}').join(spelled);
}

function sendRaw(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function writeEvents(res: ServerResponse, events: Iterable<string>, end = true): Promise<void> {
  for (const e of events) if (!res.write(e)) await once(res, 'drain');
  if (end) res.end();
}

/**
 * A model server speaking the real streaming grammar of Anthropic Messages, Chat Completions and
 * Responses (SSE.md), with replies decided by a script from the conversation itself. The embedded
 * default model of `roller collect`, and the upstream of every proxy test.
 */
/** The answer to `generate: false`: a completed response with no output and no output tokens. */
function prewarmResponse(body: Json): Json {
  return {
    id: `resp_${randomId(24)}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? 'scripted',
    status: 'completed',
    output: [],
    usage: { input_tokens: Math.ceil(JSON.stringify(body.input ?? []).length / 4), input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: Math.ceil(JSON.stringify(body.input ?? []).length / 4) },
  };
}

export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModelServer> {
  const script = options.script ?? DEFAULT_SCRIPT;
  let answered = 0;
  // stall_first: how many requests of each scenario this server has left unanswered so far.
  const stalled = new Map<string, number>();
  const stalls = (name: string): boolean => {
    const n = script.scenarios.find((sc) => sc.name === name)?.stall_first ?? 0;
    const done = stalled.get(name) ?? 0;
    if (done >= n) return false;
    stalled.set(name, done + 1);
    return true;
  };
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const requestId = `req_011C${randomId(20)}`;
      const headers = { 'request-id': requestId, 'x-request-id': requestId };
      if (req.method === 'GET' && /\/models$/.test(path)) {
        const ids = options.models?.length ? options.models : ['scripted'];
        return sendJson(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', type: 'model', display_name: id })) }, headers);
      }
      if (req.method === 'POST' && path.endsWith('/messages/count_tokens')) {
        // The key only: counting names no model a provider would refuse.
        const refusedKey = admission('anthropic-messages', req, undefined, { ...(options.requireKey !== undefined ? { requireKey: options.requireKey } : {}) });
        if (refusedKey) return sendJson(res, refusedKey.status, refusedKey.body, { ...headers, ...refusedKey.headers });
        return sendJson(res, 200, { input_tokens: Math.ceil(Buffer.concat(parts).length / 4) }, headers);
      }
      const protocol = protocolOfPath(path);
      if (req.method !== 'POST' || protocol === 'other') {
        return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `scripted model: no route ${req.method} ${path}` } }, headers);
      }
      let body: Json;
      try {
        body = JSON.parse(decodeBody(Buffer.concat(parts), req.headers['content-encoding']).toString('utf8')) as Json;
      } catch (err) {
        return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: `scripted model: body is not JSON (${(err as Error).message})` } }, headers);
      }
      // A provider checks the key and the model before it counts a request.
      const refused = admission(protocol, req, body.model, options);
      if (refused) return sendJson(res, refused.status, refused.body, { ...headers, ...refused.headers });
      const sglang = protocol === 'openai-chat-completions' ? sglangStreamRefusal(body) : null;
      if (sglang) return sendJson(res, sglang.status, sglang.body, headers);
      if (answered >= script.max_requests) {
        return sendJson(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: `scripted model: request cap of ${script.max_requests} reached` } }, headers);
      }
      answered++;
      const conversation = conversationOf(protocol, body);
      const reply = decide(script, conversation);
      if (stalls(reply.scenario)) return; // no answer: the client waits until it gives up (close() ends the socket)
      const scenario = script.scenarios.find((sc) => sc.name === reply.scenario);
      if (scenario?.fail) {
        const e = providerError(protocol, scenario.fail.status, scenario.fail.message ?? `scripted model: scenario ${scenario.name} answers ${scenario.fail.status}`, scenario.fail.retry_after_s);
        return sendJson(res, e.status, e.body, { ...headers, ...e.headers });
      }
      const response = buildResponse(protocol, body, conversation, reply);
      options.onReply?.({ protocol, path, reply, response });
      // echo_key: the key spelled into the answer's bytes as a careless upstream would (escaped, so JSON readers decode it).
      const echo = scenario?.echo_key ? keyEchoes(presentedKey(req) ?? '') : (s: string) => s;
      if (!body.stream) return sendRaw(res, 200, echo(JSON.stringify(response)), headers);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
      // Chat sends its usage chunk only when asked (stream_options.include_usage), as real servers do.
      const chat = () => chatChunks(body.stream_options?.include_usage ? response : { ...response, usage: undefined });
      const events = protocol === 'anthropic-messages' ? anthropicEvents(response) : protocol === 'openai-chat-completions' ? chat() : responsesEvents(response);
      // cut_stream: the connection dies mid-answer, as an upstream reset does (half the events sent, no terminator).
      if (scenario?.cut_stream) {
        const all = [...events];
        return void writeEvents(res, all.slice(0, Math.max(1, Math.floor(all.length / 2))), false).finally(() => res.destroy());
      }
      void writeEvents(res, [...events].map(echo)).catch(() => res.destroy());
    });
  });
  // Responses over WebSocket (Codex, Pi): each `response.create` frame is a request; events go back as frames.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (protocolOfPath((req.url ?? '/').split('?')[0]!) !== 'openai-responses') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        let frame: Json;
        try {
          frame = JSON.parse(data.toString()) as Json;
        } catch {
          return ws.send(JSON.stringify({ type: 'error', code: 'invalid_json', message: 'scripted model: frame is not JSON' }));
        }
        if (frame.type !== 'response.create') return;
        if (answered >= script.max_requests) {
          return ws.send(JSON.stringify({ type: 'error', code: 'rate_limit_exceeded', message: `scripted model: request cap of ${script.max_requests} reached` }));
        }
        const { type: _type, ...flat } = frame;
        const body = (frame.response as Json | undefined) ?? flat;
        const refused = admission('openai-responses', req, body.model, options);
        if (refused) return ws.send(JSON.stringify({ type: 'error', status: refused.status, error: refused.body.error }));
        answered++;
        if (body.generate === false) {
          // A prewarm (Codex over WebSocket): the server sets up the context and generates nothing.
          for (const e of responsesEventObjects(prewarmResponse(body))) ws.send(JSON.stringify(e));
          return;
        }
        const conversation = conversationOf('openai-responses', body);
        const reply = decide(script, conversation);
        if (stalls(reply.scenario)) return;
        const response = buildResponse('openai-responses', body, conversation, reply);
        options.onReply?.({ protocol: 'openai-responses', path: req.url ?? '/', reply, response });
        for (const e of responsesEventObjects(response)) ws.send(JSON.stringify(e));
      });
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port, address } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    port,
    get answered() {
      return answered;
    },
    async close() {
      server.close();
      for (const s of sockets) s.destroy();
      await once(server, 'close').catch(() => {});
    },
  };
}
