import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ErrorCode } from '../../core/errors.js';
import type { RecordedError } from '../../schemas/common.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { splitRequestHeaders, splitResponseHead, type NativeIdentityHeaders } from './headers.js';
import type { EndMeta, RequestMeta, WireLogWriter } from './wire-log.js';

/** What every exchange of one proxy shares. */
export interface ExchangeContext {
  readonly pool: Dispatcher;
  readonly wire: WireLogWriter;
  /** The upstream's origin (for error messages) and path prefix. */
  readonly upstreamOrigin: string;
  readonly basePath: string;
  readonly correlation: Readonly<Record<string, keyof NativeIdentityHeaders>> | undefined;
  readonly maxRequestBytes: number;
  nextCall(): { callId: string; seq: number };
  /** The exchange is over and its end frame appended. */
  done(exchange: HttpExchange): void;
}

/** The request as an exchange reads it: node's IncomingMessage has these, and so has the HTTP/1.1 front's request. */
export interface ClientRequestHead {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  /** Name, value, name, value, … as received. */
  readonly rawHeaders: string[];
}

/** Where the response goes: node's ServerResponse has these members, and so has the front's reply (http1-front.ts). */
export interface ClientReply {
  /** A head was given (writeHead): another cannot be. */
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  readonly writableFinished: boolean;
  /** `headers`: name, value, name, value, … */
  writeHead(status: number, headers: string[]): unknown;
  /** false: wait for 'drain' before writing more. */
  write(chunk: Buffer): boolean;
  end(body?: string): unknown;
  /** The client sees the response cut, never a clean end. */
  destroy(): unknown;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** How an exchange stops taking its request body (over the size limit, or the client left): the rest is drained or dropped. */
export interface ClientBody {
  stop(): void;
}

export function jsonError(res: ClientReply, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(body)), 'x-roller-proxy-error', type]);
  res.end(body);
}

/**
 * An exchange whose client side is node's http server (the connections the HTTP/1.1 front hands over): the body from
 * the request's events, the client's leaving from the response's 'close'.
 */
export function startNodeExchange(ctx: ExchangeContext, req: IncomingMessage, res: ServerResponse): HttpExchange {
  const onData = (chunk: Buffer): void => exchange.bodyChunk(chunk);
  const onEnd = (): void => exchange.bodyEnd();
  const exchange = new HttpExchange(ctx, req, res, {
    stop() {
      req.off('data', onData);
      req.off('end', onEnd);
      req.resume(); // drain the rest, so a 413 can be read
    },
  });
  exchange.start();
  res.on('close', () => exchange.clientClosed());
  req.on('data', onData);
  req.once('end', onEnd);
  return exchange;
}

/**
 * One HTTP exchange through the recording proxy, as undici's handler (`Dispatcher.dispatch`): the request body
 * is read whole, forwarded and then written to the wire log (logged first and held while the log is over its
 * mark), and every response chunk goes to the client and then the log as it arrives. Its client side is either the
 * HTTP/1.1 front (http1-front.ts) or node's http server (startNodeExchange): whichever it is feeds it the body
 * (bodyChunk, bodyEnd) and says when the client left (clientClosed). The handler API, not `request()`: no response
 * stream object, no promise per request and no async-iterator turn per chunk — the request path is the part of
 * recording every call pays for, under load.
 * Backpressure both ways: a client that does not drain, or a wire log over its mark, pauses the upstream read
 * (undici's `resume` restarts it once both are clear), so no response is ever held whole in memory.
 */
export class HttpExchange implements Dispatcher.DispatchHandler {
  private readonly callId: string;
  private readonly meta: RequestMeta;
  private readonly forwardHeaders: string[];
  private readonly errors: RecordedError[] = [];
  private bodyParts: Buffer[] = [];
  private bodyBytes = 0;
  private bodyEnded = false;
  /** A request body forwarded and not yet in the log (bodyEnd to logRequest: the same turn unless dispatch failed). */
  private unlogged: Buffer | undefined;
  private abortUpstream: ((err?: Error) => void) | undefined;
  private resumeUpstream: (() => void) | undefined;
  private headersSeen = false;
  private waitingForClient = false;
  private waitingForLog = false;
  private clientAborted = false;
  private firstByteAt: number | null = null;
  private finished = false;

  constructor(
    private readonly ctx: ExchangeContext,
    req: ClientRequestHead,
    private readonly res: ClientReply,
    private readonly body: ClientBody,
  ) {
    const { callId, seq } = ctx.nextCall();
    this.callId = callId;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const split = splitRequestHeaders(req.rawHeaders, ctx.correlation);
    this.forwardHeaders = split.forward;
    this.meta = {
      seq,
      transport: 'http',
      protocol: protocolOfPath(query === -1 ? url : url.slice(0, query)),
      method: req.method ?? 'GET',
      path: url,
      upstream_path: ctx.basePath + url,
      started_at: Date.now(),
      identity: split.identity,
      dropped: split.dropped,
    };
    if (split.contentEncoding !== undefined) this.meta.content_encoding = split.contentEncoding;
  }

  /** The exchange is open (before its body): once, by whoever created it. */
  start(): void {
    this.ctx.wire.opened();
  }

  // ---- the request ------------------------------------------------------------------------------------

  /** A piece of the request body (none come after stop()). */
  bodyChunk(chunk: Buffer): void {
    if (this.bodyEnded || this.finished) return;
    this.bodyBytes += chunk.length;
    if (this.bodyBytes <= this.ctx.maxRequestBytes) {
      this.bodyParts.push(chunk);
      return;
    }
    const message = `request body over ${this.ctx.maxRequestBytes} bytes`;
    this.body.stop();
    this.bodyParts = [];
    this.errors.push({ code: ErrorCode.REQUEST_TOO_LARGE, message: `${message}; raise maxRequestBytes` });
    jsonError(this.res, 413, 'roller_request_too_large', `roller proxy: ${message}`);
    this.meta.body_omitted = 'too large';
    this.ctx.wire.appendRequest(this.callId, this.meta);
    this.finish(null, false, 'not forwarded: request too large');
  }

  /** The request body is complete: it is forwarded and logged. */
  bodyEnd(): void {
    if (this.bodyEnded || this.finished) return;
    this.bodyEnded = true;
    const parts = this.bodyParts;
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.bodyBytes);
    this.bodyParts = [];
    try {
      if (this.ctx.wire.backedUp) {
        // The log is over its mark (the disk is behind): this request waits for it before it goes out.
        const logFull = this.ctx.wire.appendRequest(this.callId, this.meta, body);
        if (logFull) void logFull.then(() => this.dispatch(body));
        else this.dispatch(body);
      } else {
        // Forwarded first, logged second: the upstream (on the other core) starts on the request while the proxy
        // copies it into the log, instead of after. The response's frames wait for the request frame (logRequest).
        this.unlogged = body;
        this.dispatch(body);
        this.logRequest();
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /** Appends the request frame of a request forwarded before it was logged (once; before any frame of its response). */
  private logRequest(): void {
    const body = this.unlogged;
    if (body === undefined) return;
    this.unlogged = undefined;
    // No wait on the log's mark here: the request is out, and the response's appends pause the upstream read instead.
    void this.ctx.wire.appendRequest(this.callId, this.meta, body);
  }

  private dispatch(body: Buffer): void {
    if (this.finished) return;
    if (this.clientAborted) return this.finish(null, false, null);
    // undici reports every failure, even a synchronous one, through onError.
    this.ctx.pool.dispatch(
      { path: this.meta.upstream_path, method: this.meta.method as Dispatcher.HttpMethod, headers: this.forwardHeaders, body: body.length > 0 ? body : null },
      this,
    );
  }

  // ---- undici's handler ---------------------------------------------------------------------------------

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.clientAborted) abort(new Error('the client went away'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: informational, not the response
    this.logRequest();
    this.headersSeen = true;
    this.resumeUpstream = resume;
    // One pass over the raw headers: the client's list and the logged meta (ResponseHeadMeta), no header objects.
    const head = splitResponseHead(statusCode, rawHeaders);
    if (!this.clientAborted) this.res.writeHead(statusCode, head.forClient);
    // No flushHeaders(): the head leaves with the first body chunk, one socket write instead of two.
    this.ctx.wire.appendResponseHead(this.callId, statusCode, head.recorded);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.firstByteAt ??= Date.now();
    const res = this.res;
    if (!this.clientAborted && !res.destroyed && !res.write(chunk)) {
      this.waitingForClient = true;
      res.once('drain', this.onClientDrain);
    }
    const logFull = this.ctx.wire.append(this.callId, 'd', undefined, chunk);
    if (logFull) {
      this.waitingForLog = true;
      void logFull.then(this.onLogClear);
    }
    return !this.waitingForClient && !this.waitingForLog;
  }

  onComplete(): void {
    if (this.finished) return;
    if (!this.clientAborted) this.res.end();
    this.finish(this.firstByteAt, true, null);
  }

  onError(err: Error): void {
    if (this.finished) return;
    let upstreamError: string | null = null;
    if (!this.clientAborted) {
      if (this.headersSeen) {
        upstreamError = `the response was cut: ${err.message}`;
        this.errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: upstreamError });
        this.res.destroy(); // the client must see the cut too, not a clean end
      } else {
        upstreamError = err.message;
        this.errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: `connecting to ${this.ctx.upstreamOrigin} failed: ${upstreamError}` });
        jsonError(this.res, 502, 'roller_upstream_unreachable', `roller proxy: the model API at ${this.ctx.upstreamOrigin} could not be reached (${upstreamError})`);
      }
    }
    this.finish(this.firstByteAt, false, upstreamError);
  }

  // ---- the client and the log ---------------------------------------------------------------------------

  private readonly onClientDrain = (): void => {
    this.waitingForClient = false;
    this.resumeIfClear();
  };

  private readonly onLogClear = (): void => {
    this.waitingForLog = false;
    this.resumeIfClear();
  };

  private resumeIfClear(): void {
    if (!this.waitingForClient && !this.waitingForLog && !this.finished) this.resumeUpstream?.();
  }

  /** The client's connection closed: before the response was finished, that is an abort. */
  clientClosed(): void {
    if (this.res.writableFinished || this.finished) return;
    this.clientAborted = true;
    if (this.waitingForClient) {
      // It will never drain: stop waiting for it (the upstream read goes on until the abort lands).
      this.res.off('drain', this.onClientDrain);
      this.onClientDrain();
    }
    if (this.abortUpstream) {
      this.abortUpstream(new Error('the client went away')); // undici answers with onError
    } else if (!this.bodyEnded) {
      this.body.stop();
      this.bodyParts = [];
      this.meta.body_omitted = 'the client aborted before the body ended';
      this.ctx.wire.appendRequest(this.callId, this.meta);
      this.finish(null, false, null);
    }
    // Otherwise the request is on its way (dispatch() or onConnect() sees the abort).
  }

  private finish(firstByteAt: number | null, upstreamEnded: boolean, upstreamError: string | null): void {
    if (this.finished) return;
    this.finished = true;
    this.logRequest(); // a request that failed in dispatch() itself (undici reports even those through onError)
    // The client side may still say the client left (node's response emits 'close' after every response): clientClosed()
    // returns at once for a finished exchange (cheaper than taking a listener off an emitter on every request).
    const end: EndMeta = {
      first_byte_at: firstByteAt,
      ended_at: Date.now(),
      upstream_ended: upstreamEnded,
      client_aborted: this.clientAborted,
      upstream_error: upstreamError,
      errors: this.errors,
    };
    this.ctx.wire.appendEnd(this.callId, end);
    this.ctx.wire.ended();
    this.ctx.done(this);
  }

  /**
   * A bug in the proxy itself (never an input's fault): the client gets a 500 that says so, the call is
   * recorded with the error, the process lives on.
   */
  fail(err: unknown): void {
    if (this.finished) return;
    const message = `roller proxy internal error: ${(err as Error)?.message ?? String(err)}`;
    this.errors.push({ code: ErrorCode.PROXY_INTERNAL, message });
    this.abortUpstream?.(new Error(message));
    if (!this.clientAborted) jsonError(this.res, 500, 'roller_proxy_error', message);
    this.finish(this.firstByteAt, false, message);
  }
}
