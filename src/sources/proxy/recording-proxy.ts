import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { Pool } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { ensurePrivateDir } from '../../core/private-dir.js';
import type { Source } from '../../core/stage.js';
import type { Call } from '../../schemas/call.js';
import type { CorrelationHeaders } from './headers.js';
import { ByteBudget } from '../../core/byte-budget.js';
import { proxySecrets, type CredentialCustody } from './credential.js';
import { captureFailed, HttpExchange, jsonError, type ExchangeContext, type ExchangeSummary } from './http-exchange.js';
export type { ExchangeSummary } from './http-exchange.js';
import { projectCalls } from './project-calls.js';
import { parseUpstream, printableUpstream } from './request-target.js';
import { readWireFrames } from './wire-frames.js';
import { WIRE_LOG_FILE, WireLogWriter, type WireFollow } from './wire-log.js';
import { relayWebSocket, type RelayContext } from './websocket-relay.js';

export interface RecordingProxyOptions {
  /**
   * Base URL of the model API: its origin is the only host requests go to, its path a prefix of every request path,
   * its query parameters added to every request, its userinfo sent as Basic credentials when a request has none.
   */
  upstream: string;
  /** A path prefix of the clients' base URL that the upstream's base stands for, removed before the upstream's path is prepended. */
  clientBasePath?: string;
  /** Non-secret headers added to every forwarded request (a model config's `headers`). */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** Fields written into every Chat Completions request body (vLLM's `return_token_ids`, `logprobs`). */
  upstreamBodyFields?: Readonly<Record<string, unknown>>;
  /** Capture directory (created owner-only): the wire log (raw/wire.frames) is written here. */
  outDir: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Random scope embedded in call ids; one per capture attempt. */
  captureScope?: string;
  /**
   * Key custody: clients hold only `standIn`; every request must carry it (or is refused with a 401, recorded), and
   * the proxy puts `key` in its place. Without it, clients' credentials are forwarded as sent. Either way every
   * credential value forwarded is masked (same length, `REDACTED***`) in what is relayed back and in what is written.
   */
  credential?: CredentialCustody;
  /** A compressed response is decoded to be masked; past this many decoded bytes (default 256 MB) it is cut. */
  maxDecodedResponseBytes?: number;
  /** Extra correlation headers: removed before forwarding, their value kept as this identity field. */
  correlationHeaders?: CorrelationHeaders;
  /** Told of each HTTP exchange as it ends: method, path (no query), status, time (`roller proxy --log`). */
  onExchange?: (e: ExchangeSummary) => void;
  /** The harnesses' identity headers (their adapters' identityHeaders): forwarded, their values recorded as native identity. */
  identityHeaders?: CorrelationHeaders;
  /**
   * One request body's limit (default 64 MB: past it, 413) and all requests' bodies held at once (96 MB: a body that
   * does not fit yet waits unread for its turn; a chunked body past it, or one that can never fit, gets a 503).
   */
  maxRequestBytes?: number;
  maxBufferedBytes?: number;
  /** How long a body's chunk may wait for room among all held bodies before its request gets a 503 (default 30 s). */
  budgetWaitMs?: number;
  /** A body longer than this (default 4 MB) is forwarded as it arrives, each chunk logged first, instead of held whole. */
  streamRequestBodiesOver?: number;
  /** Limits of the projection of calls (`calls`), not of forwarding. */
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
  /** Upstream connections (default: as many as requests in flight, so one stuck call never holds up another). */
  upstreamConnections?: number;
  /** How long the model API may take to send a response head, and go quiet mid-body (default 10 min each). */
  upstreamHeadersTimeoutMs?: number;
  upstreamBodyTimeoutMs?: number;
  /** How long a client may take to send a request head (default 30 s: slow heads are cut), and a whole request (5 min). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /**
   * How long a client connection may sit idle between requests (default 120 s: a harness calls the model over one
   * kept-alive connection, tool runs in between). A response on its way is never timed here.
   */
  keepAliveMs?: number;
  /** How many bytes of the wire log may wait for the disk before upstream reads pause (default 16 MB). */
  wireHighWaterBytes?: number;
  /** After close() is called, how long in-flight exchanges get to finish. Default 10 s. */
  closeGraceMs?: number;
  /** Relay Responses-over-WebSocket upgrades (Codex, Pi) and record them (default). false: refuse them at once. */
  websocket?: boolean;
  /** Called at once when the wire log cannot be written (from then on every new request gets a 503). */
  onWireFailure?(err: RollerError): void;
}

export interface RecordingProxy {
  readonly url: string;
  readonly port: number;
  readonly captureScope: string;
  /** The wire log being written (WIRE_LOG_FILE under outDir). */
  readonly wirePath: string;
  /** How far the wire log is on disk, and whether it is closed (a follower's view: readWireFrames' `follow`). */
  readonly wireProgress: WireFollow;
  /** Set when the wire log could not be written: the capture is broken from there on. */
  readonly failure: RollerError | undefined;
  /**
   * The calls, as they end, projected from the wire log as it is written (in this thread, behind the request path).
   * Consume it at most once; it ends after close(), and throws the log's failure, if any, after the last call.
   */
  readonly calls: Source<Call>;
  /** Stop accepting, let in-flight exchanges finish (bounded), close the wire log (which ends `calls`). */
  close(): Promise<void>;
}

/**
 * A recording reverse proxy: node's http server in front, undici behind. Every byte of a response goes to the client
 * as it arrives, and the request body and the response bytes go to the wire log; calls are projected from the log.
 */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  let upstream: ReturnType<typeof parseUpstream>;
  try {
    upstream = parseUpstream(options.upstream, { ...(options.clientBasePath ? { clientBasePath: options.clientBasePath } : {}), ...(options.upstreamHeaders ? { headers: options.upstreamHeaders } : {}), ...(options.upstreamBodyFields ? { bodyFields: options.upstreamBodyFields } : {}) });
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `the upstream ${printableUpstream(options.upstream)} is not usable: ${(err as Error).message}`);
  }
  const made = !existsSync(options.outDir);
  await ensurePrivateDir(options.outDir, 'the capture directory');
  const scope = options.captureScope ?? randomBytes(4).toString('hex');
  const pool = new Pool(upstream.origin, { connections: options.upstreamConnections ?? null, pipelining: 1 });
  const wire = await WireLogWriter.open(join(options.outDir, WIRE_LOG_FILE), {
    ...(options.wireHighWaterBytes === undefined ? {} : { highWaterBytes: options.wireHighWaterBytes }),
    onFailure: (err) => (options.onWireFailure ? options.onWireFailure(err) : process.stderr.write(`roller proxy: ${err.message} [${err.code}]\n`)),
  });
  const masker = proxySecrets(upstream, options.credential);
  const inFlight = new Set<object>();
  let seq = 0;
  let consumed = false;
  let idle: (() => void) | undefined;
  const nextCall = (): { callId: string; seq: number } => {
    const n = seq++;
    return { callId: `c-${scope}-${String(n).padStart(6, '0')}`, seq: n };
  };
  const track = { add: (x: object) => inFlight.add(x), done: (x: object) => inFlight.delete(x) && inFlight.size === 0 && idle?.() };
  const exchanges: ExchangeContext = {
    pool,
    wire,
    upstream,
    correlation: options.correlationHeaders,
    identity: options.identityHeaders,
    custody: options.credential,
    masker,
    maxDecodedResponseBytes: options.maxDecodedResponseBytes ?? 256 << 20,
    maxRequestBytes: options.maxRequestBytes ?? 64 << 20,
    streamBodiesOver: options.streamRequestBodiesOver ?? 4 << 20,
    budget: new ByteBudget(options.maxBufferedBytes ?? 96 << 20),
    budgetWaitMs: options.budgetWaitMs ?? 30_000,
    upstreamHeadersTimeoutMs: options.upstreamHeadersTimeoutMs ?? 600_000,
    upstreamBodyTimeoutMs: options.upstreamBodyTimeoutMs ?? 600_000,
    nextCall,
    done: track.done,
    onExchange: options.onExchange,
  };
  const capturing = (res: ServerResponse): boolean => {
    if (!wire.failure) return true;
    captureFailed(res, wire.failure);
    return false;
  };

  const headersTimeout = options.headersTimeoutMs ?? 30_000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(headersTimeout, options.requestTimeoutMs ?? 300_000),
      keepAliveTimeout: options.keepAliveMs ?? 120_000,
      // How often node looks for heads and requests past their time: often enough that a timeout is kept to.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, headersTimeout / 4)),
      noDelay: true,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      if (!capturing(res)) return;
      let exchange: HttpExchange | undefined;
      try {
        exchange = new HttpExchange(exchanges, req, res);
        track.add(exchange);
        exchange.start();
      } catch (err) {
        // A bug in the proxy itself: the client gets a 500 that says so, the process lives on.
        if (exchange) exchange.fail(err);
        else jsonError(res, 500, 'roller_proxy_error', `roller proxy internal error: ${(err as Error).message}`);
      }
    },
  );
  // A client's FIN ends its exchange (node's default, no half-open): a client that hung up while its call waits upstream
  // is an abort at once — the upstream request is cancelled and its connection and descriptors freed.
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const relay: RelayContext = { upstream, correlation: options.correlationHeaders, identity: options.identityHeaders, custody: options.credential, masker, wire, nextCall, track, handshakeTimeoutMs: options.upstreamHeadersTimeoutMs ?? 600_000 };
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => relayWebSocket(req, socket, head, relay, options.websocket !== false));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await pool.close();
    await wire.close().catch(() => undefined);
    // Nothing was captured: what was made for it goes (a directory the user gave stays, with what it held).
    await rm(wire.path, { force: true });
    await rmdir(dirname(wire.path)).catch(() => undefined); // its own directory, when nothing else is in it
    if (made) await rmdir(options.outDir).catch(() => undefined);
    const e = err as NodeJS.ErrnoException;
    const where = `${options.host ?? '127.0.0.1'}:${options.port ?? 0}`;
    const what = e.code === 'EADDRINUSE' ? `${where} is already in use` : e.code === 'EACCES' ? `${where} may not be bound by this user` : e.code === 'EADDRNOTAVAIL' ? `${options.host} is not an address of this machine` : `${where} cannot be listened on (${e.code ?? e.message})`;
    throw new RollerError(ErrorCode.PORT_UNAVAILABLE, `roller proxy: ${what}; choose another --port (0 picks a free one) or --host`);
  }
  const { port, address } = server.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    port,
    captureScope: scope,
    wirePath: wire.path,
    wireProgress: wire,
    get failure() {
      return wire.failure;
    },
    calls: (ctx) => {
      if (consumed) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'proxy.calls is consumed once; read the wire log with readWireFrames for a second reader');
      consumed = true;
      return (async function* () {
        yield* projectCalls(readWireFrames(wire.path, { follow: wire, signal: ctx.signal }), {
          responsePath: WIRE_LOG_FILE,
          ...(options.maxJsonResponseBytes === undefined ? {} : { maxJsonResponseBytes: options.maxJsonResponseBytes }),
          ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
        });
        if (wire.failure) throw wire.failure;
      })();
    },
    close() {
      closed ??= (async () => {
        server.close();
        server.closeIdleConnections();
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
        // A failed log was reported at once (onWireFailure) and is the capture's `failure`; `calls` throws it.
        await wire.close().catch(() => undefined);
      })();
      return closed;
    },
  };
}
