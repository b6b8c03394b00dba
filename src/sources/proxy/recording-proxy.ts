import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { Source } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import type { NativeIdentityHeaders } from './headers.js';
import { FrontConnection, type FrontHandler } from './http1-front.js';
import { HttpExchange, jsonError, startNodeExchange, type ClientReply, type ExchangeContext } from './http-exchange.js';
import { projectCalls } from './project-calls.js';
import { readWireFrames } from './wire-frames.js';
import { WIRE_LOG_FILE, WireLogWriter } from './wire-log.js';
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
  /**
   * How long a client connection may sit idle between requests, or stall mid-request, before the proxy closes it.
   * Default 120 s: a harness calls the model every few seconds to minutes (tools run in between) over one kept-alive
   * connection, and node's default of 5 s would make every call after a tool run connect again. A response on its way
   * is never timed here (the model may think for minutes).
   */
  keepAliveMs?: number;
  /**
   * How many bytes of the wire log may wait for the disk (default 16 MB). Over it, new requests are logged before they
   * are forwarded and wait for the disk, and response reads pause until the log is under it again.
   */
  wireHighWaterBytes?: number;
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
  const wire = await WireLogWriter.open(join(options.outDir, WIRE_LOG_FILE), options.wireHighWaterBytes === undefined ? {} : { highWaterBytes: options.wireHighWaterBytes });
  const inFlight = new Set<HttpExchange>();
  const sockets = new Set<Socket>();
  let seq = 0;
  let consumed = false;
  const nextCall = (): { callId: string; seq: number } => {
    const n = seq++;
    return { callId: `c-${scope}-${String(n).padStart(6, '0')}`, seq: n };
  };

  let idle: (() => void) | undefined;
  const exchanges: ExchangeContext = {
    pool,
    wire,
    upstreamOrigin: upstream.origin,
    basePath,
    correlation: options.correlationHeaders,
    maxRequestBytes,
    nextCall,
    done(exchange) {
      inFlight.delete(exchange);
      if (inFlight.size === 0) idle?.();
    },
  };

  /** An exchange opened and tracked; a bug in the proxy itself while opening it answers the client, never crashes the process. */
  const open = (reply: ClientReply, start: () => HttpExchange): HttpExchange | undefined => {
    try {
      const exchange = start();
      inFlight.add(exchange);
      return exchange;
    } catch (err) {
      jsonError(reply, 500, 'roller_proxy_error', `roller proxy internal error: ${(err as Error).message}`);
      return undefined;
    }
  };
  // node's http server serves what the HTTP/1.1 front hands it (http1-front.ts: anything but a plain request with a
  // declared body length, WebSocket upgrades among them); it never listens itself.
  const server: Server = createServer((req, res) => void open(res, () => startNodeExchange(exchanges, req, res)));
  // The Keep-Alive header of every response tells clients (undici honours it) to keep theirs as long; close() still
  // ends idle ones.
  const keepAliveMs = options.keepAliveMs ?? 120_000;
  server.keepAliveTimeout = keepAliveMs;
  // The server never listens (the front does), so what node starts when it does — tracking its connections for
  // closeIdleConnections() and for its headers and request timeouts — starts here, by the event it starts on.
  server.emit('listening');
  const front: FrontHandler = {
    request(head, reply, body) {
      return open(reply, () => {
        const exchange = new HttpExchange(exchanges, head, reply, body);
        exchange.start();
        return exchange;
      });
    },
    handOff(socket) {
      connections.delete(socket);
      server.emit('connection', socket);
    },
  };
  const connections = new Map<Socket, FrontConnection>();
  // allowHalfOpen: a client's FIN is the connection's business (the front's, or node's once handed over), as in node's server.
  const listener = createNetServer({ allowHalfOpen: true, noDelay: true }, (s: Socket) => {
    sockets.add(s);
    s.on('close', () => {
      sockets.delete(s);
      connections.delete(s);
    });
    connections.set(s, new FrontConnection(s, front, keepAliveMs));
  });
  const relay: RelayContext = {
    upstream,
    basePath,
    correlation: options.correlationHeaders,
    wire,
    nextCall,
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
  listener.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(listener, 'listening');
  const { port, address } = listener.address() as AddressInfo;

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
        listener.close();
        for (const c of connections.values()) c.close();
        server.close(); // its idle connections (those the front handed over) end, its timeout checks stop
        let timer: NodeJS.Timeout | undefined;
        const drained = new Promise<void>((resolve) => {
          idle = resolve;
          if (inFlight.size === 0) resolve();
        });
        await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, options.closeGraceMs ?? 10_000)))]);
        clearTimeout(timer);
        // Whatever is still open ends as a client abort (its end frame is written by the exchange).
        for (const s of sockets) s.destroy();
        await drained;
        await pool.close();
        await wire.close();
      })();
      return closed;
    },
  };
}
