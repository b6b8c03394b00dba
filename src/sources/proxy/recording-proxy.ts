import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { BoundedQueue, type Capacity } from '../../core/bounded-queue.js';
import { ErrorCode } from '../../core/errors.js';
import type { Source } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import type { RecordedError } from '../../schemas/common.js';
import { createDecoder, protocolOfPath } from '../../transforms/protocols/index.js';
import { decodeBody } from '../../transforms/protocols/decode-body.js';
import { buildCallRecord, type Exchange } from './call-record.js';
import { responseHeadersForClient, splitRequestHeaders, type NativeIdentityHeaders } from './headers.js';
import { RawResponseLog } from './raw-log.js';
import { relayWebSocket, type RelayContext } from './websocket-relay.js';
import { ResponseTap } from './response-tap.js';

export interface RecordingProxyOptions {
  /** Base URL of the model API; a path prefix is kept (http://host:port/prefix + request path). */
  upstream: string;
  /** Capture directory: raw/responses.frames is written here. */
  outDir: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Random scope embedded in call ids; one per capture attempt. */
  captureScope?: string;
  /** Extra correlation headers: removed before forwarding, their value kept as this identity field. */
  correlationHeaders?: Readonly<Record<string, keyof NativeIdentityHeaders>>;
  maxRequestBytes?: number;
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
  /** Calls waiting for the consumer of `calls`; a handler waits for room before it records. */
  queue?: Partial<Capacity>;
  /** Upstream connections. */
  connections?: number;
  /** After close() is called, how long in-flight exchanges get to finish. Default 10 s. */
  closeGraceMs?: number;
  /**
   * Relay Responses-over-WebSocket upgrades (Codex, Pi) and record them (default). false: refuse every
   * upgrade at once, so the client falls back to HTTP without waiting.
   */
  websocket?: boolean;
}

export interface RecordingProxy {
  readonly url: string;
  readonly port: number;
  readonly captureScope: string;
  /** The calls, as they end. Consume it exactly once; it ends after close(). */
  readonly calls: Source<Call>;
  /** Stop accepting, let in-flight exchanges finish (bounded), close the raw log, end `calls`. */
  close(): Promise<void>;
}

export const RAW_RESPONSES_FILE = 'raw/responses.frames';

class RequestTooLarge extends Error {}

/** The whole request body (bounded). Plain 'data' events: an async iterator costs more per request. */
function readRequestBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let total = 0;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > max) {
        req.removeAllListeners('data');
        req.resume();
        reject(new RequestTooLarge(`request body over ${max} bytes`));
      } else parts.push(chunk);
    });
    req.once('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, total)));
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('the client aborted the request')));
  });
}

function jsonError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-roller-proxy-error': type });
  res.end(body);
}

/**
 * A recording reverse proxy (node:http in front, undici behind). Every byte of a response goes to the
 * client as it arrives; a copy goes to one append-only frames file and to the protocol decoder. A slow
 * client slows the upstream read (drain), so no response is ever held whole in memory.
 */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const upstream = new URL(options.upstream);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const scope = options.captureScope ?? randomBytes(4).toString('hex');
  const maxRequestBytes = options.maxRequestBytes ?? 64 << 20;
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 256, pipelining: 1 });
  const rawLog = await RawResponseLog.open(join(options.outDir, RAW_RESPONSES_FILE));
  const lifetime = new AbortController();
  const queue = new BoundedQueue<Call>({ items: 256, bytes: 256 << 20, ...options.queue }, lifetime.signal);
  const inFlight = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  let seq = 0;

  async function record(x: Exchange): Promise<void> {
    const call = buildCallRecord(x);
    const size = (x.contextText?.length ?? 0) + 4096;
    await queue.whenSpace(size);
    queue.push(call, size);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const n = seq++;
    const url = req.url ?? '/';
    const pathname = url.split('?')[0] ?? '/';
    const split = splitRequestHeaders(req.headers, options.correlationHeaders);
    const errors: RecordedError[] = [];
    const x: Exchange = {
      callId: `c-${scope}-${String(n).padStart(6, '0')}`,
      seq: n,
      protocol: protocolOfPath(pathname),
      method: req.method ?? 'GET',
      path: url,
      upstreamPath: basePath + url,
      startedAt: new Date().toISOString(),
      firstByteAt: null,
      endedAt: null,
      httpStatus: null,
      identity: split.identity,
      droppedHeaders: split.dropped,
      context: undefined,
      decoded: null,
      upstreamEnded: false,
      clientAborted: false,
      upstreamError: null,
      responsePath: null,
      errors,
    };
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) {
        x.clientAborted = true;
        abort.abort(new Error('client closed the connection'));
      }
    });

    let body: Buffer;
    try {
      body = await readRequestBody(req, maxRequestBytes);
    } catch (err) {
      x.endedAt = new Date().toISOString();
      if (err instanceof RequestTooLarge) {
        errors.push({ code: ErrorCode.REQUEST_TOO_LARGE, message: `${err.message}; raise maxRequestBytes` });
        x.upstreamError = 'not forwarded: request too large';
        jsonError(res, 413, 'roller_request_too_large', `roller proxy: ${err.message}`);
      } else {
        x.clientAborted = true;
      }
      return record(x);
    }
    if (body.length === 0) x.context = null;
    else {
      try {
        const text = decodeBody(body, req.headers['content-encoding']).toString('utf8');
        x.context = JSON.parse(text);
        x.contextText = text;
      } catch (err) {
        errors.push({ code: ErrorCode.BODY_DECODE_FAILED, message: `request body not recorded as JSON: ${(err as Error).message}` });
      }
    }

    let upstreamRes: Awaited<ReturnType<Pool['request']>>;
    try {
      upstreamRes = await pool.request({
        path: x.upstreamPath,
        method: x.method as 'POST',
        headers: split.forward,
        body: body.length > 0 ? body : null,
        signal: abort.signal,
      });
    } catch (err) {
      x.endedAt = new Date().toISOString();
      if (!x.clientAborted) {
        x.upstreamError = (err as Error).message;
        errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: `connecting to ${upstream.origin} failed: ${(err as Error).message}` });
        jsonError(res, 502, 'roller_upstream_unreachable', `roller proxy: the model API at ${upstream.origin} could not be reached (${(err as Error).message})`);
      }
      return record(x);
    }

    x.httpStatus = upstreamRes.statusCode;
    x.responsePath = RAW_RESPONSES_FILE;
    // No flushHeaders(): the headers leave with the first body chunk, one write instead of two.
    res.writeHead(upstreamRes.statusCode, responseHeadersForClient(upstreamRes.headers));
    const tap = new ResponseTap(createDecoder(x.protocol), upstreamRes.headers, {
      maxJsonBytes: options.maxJsonResponseBytes ?? 64 << 20,
      ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
      onError: (e) => errors.push(e),
    });
    try {
      for await (const chunk of upstreamRes.body as AsyncIterable<Buffer>) {
        x.firstByteAt ??= new Date().toISOString();
        if (!x.clientAborted && !res.write(chunk)) {
          await drainOrClose(res);
        }
        tap.push(chunk);
        await rawLog.append(x.callId, chunk);
      }
      x.upstreamEnded = true;
    } catch (err) {
      if (!x.clientAborted) {
        x.upstreamError = `the response was cut: ${(err as Error).message}`;
        errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: x.upstreamError });
      }
    }
    x.decoded = await tap.finish();
    x.endedAt = new Date().toISOString();
    if (!x.clientAborted) {
      if (x.upstreamEnded) res.end();
      else res.destroy(); // the client must see the cut too, not a clean end
    }
    return record(x);
  }

  const server: Server = createServer((req, res) => {
    const p = handle(req, res).catch((err: unknown) => {
      // A bug in the proxy itself: answer the client, never crash the process.
      jsonError(res, 500, 'roller_proxy_error', `roller proxy internal error: ${(err as Error).message}`);
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const relay: RelayContext = {
    upstream,
    basePath,
    correlation: options.correlationHeaders,
    rawLog,
    rawPath: RAW_RESPONSES_FILE,
    nextCall: () => {
      const n = seq++;
      return { callId: `c-${scope}-${String(n).padStart(6, '0')}`, seq: n };
    },
    record,
  };
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (options.websocket === false || protocolOfPath(path) !== 'openai-responses') {
      // Refused at once, so the client falls back to HTTP without waiting for a timeout.
      socket.end('HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\nx-roller-proxy: websocket-refused\r\n\r\n');
      return;
    }
    relayWebSocket(req, socket, head, relay);
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port, address } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    port,
    captureScope: scope,
    calls: (ctx) => {
      ctx.signal.addEventListener('abort', () => queue.fail(new Error('the consumer of proxy calls aborted')), { once: true });
      return queue.drain();
    },
    close() {
      closed ??= (async () => {
        server.close();
        server.closeIdleConnections();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => (timer = setTimeout(r, options.closeGraceMs ?? 10_000)))]);
        clearTimeout(timer);
        for (const s of sockets) s.destroy();
        await Promise.allSettled([...inFlight]);
        await pool.close();
        await rawLog.close();
        queue.close();
      })();
      return closed;
    },
  };
}

/**
 * Waits for the client to drain or go away, and then drops both listeners. Not
 * `Promise.race([once(res, 'drain'), once(res, 'close')])`: the loser's listeners stay on the
 * response, one pair per backpressure pause, for the whole stream.
 */
function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
