import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { Pool } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { Source } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import type { RecordedError } from '../../schemas/common.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { recordedResponseHeaders, responseHeadersForClient, splitRequestHeaders, type NativeIdentityHeaders } from './headers.js';
import { projectCalls } from './project-calls.js';
import { readWireFrames } from './wire-frames.js';
import { WIRE_LOG_FILE, WireLogWriter, type EndMeta, type RequestMeta, type ResponseHeadMeta } from './wire-log.js';
import { relayWebSocket, type RelayContext } from './websocket-relay.js';

export interface RecordingProxyOptions {
  /** Base URL of the model API; a path prefix is kept (http://host:port/prefix + request path). */
  upstream: string;
  /** Capture directory: the wire log (raw/wire.frames) is written here. */
  outDir: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Random scope embedded in call ids; one per capture attempt. */
  captureScope?: string;
  /** Extra correlation headers: removed before forwarding, their value kept as this identity field. */
  correlationHeaders?: Readonly<Record<string, keyof NativeIdentityHeaders>>;
  maxRequestBytes?: number;
  /** Limits of the projection of calls (`calls`), not of forwarding. */
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
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
  /** The wire log being written (WIRE_LOG_FILE under outDir). */
  readonly wirePath: string;
  /** The log's progress signal (shareable with a worker): see WireLogWriter.progress. */
  readonly wireProgress: Int32Array;
  /**
   * The calls, as they end, projected from the wire log in the consuming thread (it follows the log; the
   * request path never waits for it). Consume it at most once; it ends after close().
   */
  readonly calls: Source<Call>;
  /** Stop accepting, let in-flight exchanges finish (bounded), close the wire log (which ends `calls`). */
  close(): Promise<void>;
}


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
 * client as it arrives, and the request body and the response bytes go to the wire log — nothing else
 * happens on the request path: decoding and call records are projected from the log behind it (`calls`,
 * or a projector worker in the proxy pipeline). A slow client slows the upstream read (drain), and a slow
 * disk does too, so no response is ever held whole in memory.
 */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const upstream = new URL(options.upstream);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const scope = options.captureScope ?? randomBytes(4).toString('hex');
  const maxRequestBytes = options.maxRequestBytes ?? 64 << 20;
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 256, pipelining: 1 });
  const wire = await WireLogWriter.open(join(options.outDir, WIRE_LOG_FILE));
  const inFlight = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  let seq = 0;
  let consumed = false;

  function end(callId: string, meta: EndMeta): Promise<void> | undefined {
    return wire.append(callId, 'x', meta);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const n = seq++;
    const callId = `c-${scope}-${String(n).padStart(6, '0')}`;
    const url = req.url ?? '/';
    const pathname = url.split('?')[0] ?? '/';
    const split = splitRequestHeaders(req.headers, options.correlationHeaders);
    const errors: RecordedError[] = [];
    const meta: RequestMeta = {
      seq: n,
      transport: 'http',
      protocol: protocolOfPath(pathname),
      method: req.method ?? 'GET',
      path: url,
      upstream_path: basePath + url,
      started_at: Date.now(),
      identity: split.identity,
      dropped: split.dropped,
    };
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined) meta.content_encoding = encoding;
    let clientAborted = false;
    let firstByteAt: number | null = null;
    // An EventEmitter, not an AbortController: undici takes either, and an AbortSignal per request
    // (creation, listeners) was the single biggest cost of the request path after the socket writes.
    const abort = new EventEmitter();
    res.on('close', () => {
      if (!res.writableFinished) {
        clientAborted = true;
        abort.emit('abort');
      }
    });

    let body: Buffer;
    try {
      body = await readRequestBody(req, maxRequestBytes);
    } catch (err) {
      const tooLarge = err instanceof RequestTooLarge;
      if (tooLarge) {
        errors.push({ code: ErrorCode.REQUEST_TOO_LARGE, message: `${err.message}; raise maxRequestBytes` });
        jsonError(res, 413, 'roller_request_too_large', `roller proxy: ${err.message}`);
      }
      meta.body_omitted = tooLarge ? 'too large' : 'the client aborted before the body ended';
      wire.appendRequest(callId, meta);
      return end(callId, {
        first_byte_at: null,
        ended_at: Date.now(),
        upstream_ended: false,
        client_aborted: !tooLarge,
        upstream_error: tooLarge ? 'not forwarded: request too large' : null,
        errors,
      });
    }
    const logFull = wire.appendRequest(callId, meta, body);
    if (logFull) await logFull; // only when the log is over its high-water mark: no microtask turn otherwise
    if (clientAborted) {
      return end(callId, { first_byte_at: null, ended_at: Date.now(), upstream_ended: false, client_aborted: true, upstream_error: null, errors });
    }

    let upstreamRes: Awaited<ReturnType<Pool['request']>>;
    try {
      upstreamRes = await pool.request({
        path: meta.upstream_path,
        method: meta.method as 'POST',
        headers: split.forward,
        body: body.length > 0 ? body : null,
        signal: abort,
      });
    } catch (err) {
      let upstreamError: string | null = null;
      if (!clientAborted) {
        upstreamError = (err as Error).message;
        errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: `connecting to ${upstream.origin} failed: ${upstreamError}` });
        jsonError(res, 502, 'roller_upstream_unreachable', `roller proxy: the model API at ${upstream.origin} could not be reached (${upstreamError})`);
      }
      return end(callId, { first_byte_at: null, ended_at: Date.now(), upstream_ended: false, client_aborted: clientAborted, upstream_error: upstreamError, errors });
    }

    // No flushHeaders(): the headers leave with the first body chunk, one write instead of two.
    res.writeHead(upstreamRes.statusCode, responseHeadersForClient(upstreamRes.headers));
    wire.append(callId, 'r', { status: upstreamRes.statusCode, headers: recordedResponseHeaders(upstreamRes.headers) } satisfies ResponseHeadMeta);
    let upstreamError: string | null = null;
    const cut = await relayBody(upstreamRes.body, res, (chunk) => {
      firstByteAt ??= Date.now();
      return wire.append(callId, 'd', undefined, chunk);
    });
    const upstreamEnded = cut === null;
    if (cut && !clientAborted) {
      upstreamError = `the response was cut: ${cut.message}`;
      errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: upstreamError });
    }
    if (!clientAborted) {
      if (upstreamEnded) res.end();
      else res.destroy(); // the client must see the cut too, not a clean end
    }
    return end(callId, { first_byte_at: firstByteAt, ended_at: Date.now(), upstream_ended: upstreamEnded, client_aborted: clientAborted, upstream_error: upstreamError, errors });
  }

  const server: Server = createServer((req, res) => {
    wire.opened();
    const p = handle(req, res).finally(() => wire.ended()).catch((err: unknown) => {
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
    wire,
    nextCall: () => {
      const n = seq++;
      return { callId: `c-${scope}-${String(n).padStart(6, '0')}`, seq: n };
    },
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
    wirePath: wire.path,
    wireProgress: wire.progress,
    calls: (ctx) => {
      if (consumed) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'proxy.calls is consumed once; follow the wire log with readWireFrames for a second reader');
      consumed = true;
      return projectCalls(readWireFrames(wire.path, { follow: wire.progress, signal: ctx.signal }), {
        responsePath: WIRE_LOG_FILE,
        ...(options.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: options.maxJsonResponseBytes }),
        ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
      });
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
        await wire.close();
      })();
      return closed;
    },
  };
}

/**
 * Forwards the upstream body to the client chunk by chunk and hands each chunk to `record`; resolves when the
 * body ended (null) or failed (its error). Backpressure both ways: a client that does not drain, or a record
 * that returns a promise (the wire log is full), pauses the upstream read until both are clear. A client
 * that goes away stops being written to; the read goes on until the upstream is aborted (the caller's signal)
 * or ends. Plain 'data' events, not `for await`: the async iterator costs a promise and a microtask turn per
 * chunk on the forwarding thread.
 */
function relayBody(body: Readable, res: ServerResponse, record: (chunk: Buffer) => Promise<void> | undefined): Promise<Error | null> {
  return new Promise((resolve) => {
    let waitingForClient = false;
    let waitingForLog = false;
    const resumeIfClear = (): void => {
      if (!waitingForClient && !waitingForLog) body.resume();
    };
    const onDrain = (): void => {
      waitingForClient = false;
      resumeIfClear();
    };
    let settled = false;
    const settle = (result: Error | null): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      res.off('drain', onDrain);
      res.off('close', onDrain);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      if (!res.destroyed && !res.writableEnded && !res.write(chunk)) waitingForClient = true;
      const full = record(chunk);
      if (full) {
        waitingForLog = true;
        void full.then(() => {
          waitingForLog = false;
          resumeIfClear();
        });
      }
      if (waitingForClient || waitingForLog) body.pause();
    };
    body.on('data', onData);
    body.once('end', () => settle(null));
    // Stays attached: an error after the end must not become an uncaught 'error' event.
    body.on('error', (err: Error) => settle(err));
    body.once('close', () => settle(new Error('the response body closed before its end')));
    res.on('drain', onDrain);
    res.on('close', onDrain); // a client gone away is never drained: stop waiting for it
  });
}
