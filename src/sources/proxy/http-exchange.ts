import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ErrorCode } from '../../core/errors.js';
import type { SecretMasker } from '../../core/secret-masker.js';
import type { RecordedError } from '../../schemas/common.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { queryCredentials, swapCredential, swapQueryCredential, type CredentialCustody } from './credential.js';
import { withBodyFields } from './body-fields.js';
import { hasHeader, ResponseMask, setHeader } from './response-mask.js';
import { splitRequestHeaders, splitResponseHead, type CorrelationHeaders } from './headers.js';
import { SMALL_BODY_BYTES, type ByteBudget } from '../../core/byte-budget.js';
import { redactPath, requestPath, upstreamPath, type UpstreamTarget } from './request-target.js';
import type { EndMeta, RequestMeta, WireLogWriter } from './wire-log.js';

/** What every exchange of one proxy shares. */
export interface ExchangeContext {
  readonly pool: Dispatcher;
  readonly wire: WireLogWriter;
  readonly upstream: UpstreamTarget & { basicAuth: string | undefined };
  readonly correlation: CorrelationHeaders | undefined;
  readonly identity: CorrelationHeaders | undefined;
  /** Key custody: the stand-in clients must carry and the key put in its place (absent: credentials pass as sent). */
  readonly custody: CredentialCustody | undefined;
  /** The secrets the proxy knows of itself; each exchange adds the credentials it forwards. */
  readonly masker: SecretMasker;
  /** A compressed response is decoded (to mask what it holds) up to this many bytes; past it, it is cut. */
  readonly maxDecodedResponseBytes: number;
  readonly maxRequestBytes: number;
  /** A body longer than this is forwarded as it arrives (each chunk logged first) instead of held whole. */
  readonly streamBodiesOver: number;
  /** Request bytes held in memory across all exchanges, taken as they arrive. */
  readonly budget: ByteBudget;
  /** How long a chunk may wait for room in the budget before its request gets a 503. */
  readonly budgetWaitMs: number;
  readonly upstreamHeadersTimeoutMs: number;
  readonly upstreamBodyTimeoutMs: number;
  nextCall(): { callId: string; seq: number };
  /** The exchange is over (its end frame appended, or nothing was logged). */
  done(exchange: HttpExchange): void;
  /** Told of each exchange as it ends (roller proxy --log). */
  readonly onExchange?: ((e: ExchangeSummary) => void) | undefined;
}

/** One exchange as a log line says it: never a header, a body or a query string. */
export interface ExchangeSummary {
  seq: number;
  method: string;
  /** The request path without its query (the query may hold a credential). */
  path: string;
  protocol: string;
  /** The upstream's status (null: none reached the client, e.g. a refusal or a failed connection). */
  status: number | null;
  ms: number;
  error: string | null;
}

const mb = (n: number) => `${Math.round(n / (1 << 20))} MB`;

/** The 503 of a proxy whose wire log cannot be written: nothing is forwarded unrecorded. */
export function captureFailed(res: ServerResponse, err: Error): void {
  jsonError(res, 503, 'roller_capture_failed', `roller proxy: recording failed, so nothing is forwarded: ${err.message}`);
}

/** A JSON error the client can read, or a cut connection once a response head went out. */
export function jsonError(res: ServerResponse, status: number, type: string, message: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-roller-proxy-error': type, ...extra });
  res.end(body);
}

/**
 * One HTTP exchange through the recording proxy, as undici's dispatch handler. The request body is read whole
 * (bounded per request, and across requests by the context's budget, taken as bytes arrive: a chunk that finds no
 * room waits unread, bounded in time), logged, and forwarded only once its frame is on disk: nothing goes upstream unrecorded. A body past
 * `streamBodiesOver` is not held whole: its first bytes are logged and sent, then each further chunk is logged (b
 * frames) and sent once on disk, so a flood of large bodies costs a few MB each. Every response chunk goes to the client and then to the log as it
 * arrives, with the credentials forwarded masked; a client that does not drain, or a log over its high-water mark, pauses the upstream read, so no response is held
 * whole in memory. Every exchange that reached the log ends with exactly one end frame.
 */
export class HttpExchange implements Dispatcher.DispatchHandler {
  private readonly callId: string;
  private readonly meta: RequestMeta;
  private readonly errors: RecordedError[] = [];
  private readonly forwardHeaders: string[];
  /** The path to send upstream, or why the request target is refused. */
  private readonly target: string | undefined;
  private readonly refusal: string | undefined;
  private parts: Buffer[] = [];
  private received = 0;
  /** Bytes of the budget this exchange holds. */
  private reserved = 0;
  /** Gives up the request's place in the budget's queue (nothing once it was granted). */
  private leaveQueue: (() => void) | undefined;
  /** Chunks that arrived while the first of them waits for room in the budget. */
  private waiting: Buffer[] | undefined;
  private waitTimer: NodeJS.Timeout | undefined;
  private endedWhileWaiting = false;
  private controller: Dispatcher.DispatchController | undefined;
  private logged = false;
  private bodyDone = false;
  private headersSeen = false;
  private waitingForClient = false;
  private waitingForLog = false;
  private clientAborted = false;
  /** Why a streamed body was given up mid-way (it grew past maxRequestBytes): the client's answer. */
  private streamRefusal: { status: number; type: string; message: string; error: RecordedError } | undefined;
  private firstByteAt: number | null = null;
  private finished = false;
  /** The upstream response's status, once its head arrived. */
  private status: number | null = null;
  /** Every credential value this exchange forwards, masked in what goes to the client and to the log. */
  private readonly masker: SecretMasker;
  /** The response masked as it streams (a compressed one decoded first); absent when nothing is to be masked. */
  private mask: ResponseMask | undefined;

  constructor(
    private readonly ctx: ExchangeContext,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    const { callId, seq } = ctx.nextCall();
    this.callId = callId;
    const url = req.url ?? '/';
    const split = splitRequestHeaders(req.rawHeaders, ctx.correlation, ctx.identity);
    const swap = swapCredential(split.forward, ctx.custody);
    this.forwardHeaders = swap.forward;
    const target = requestPath(url);
    const path = target.ok ? target.path : url;
    const query = swapQueryCredential(upstreamPath(ctx.upstream, path), ctx.custody);
    const sent = query.path;
    if (ctx.upstream.basicAuth && !hasHeader(this.forwardHeaders, 'authorization')) this.forwardHeaders.push('authorization', `Basic ${ctx.upstream.basicAuth}`);
    for (const [name, value] of ctx.upstream.headers) setHeader(this.forwardHeaders, name, value);
    const secrets = [...swap.forwarded, ...queryCredentials(path), ...queryCredentials(sent)];
    this.masker = secrets.length === 0 ? ctx.masker : ctx.masker.with(secrets);
    // A compressed response cannot be searched for secrets as it passes: ask for none (one that comes anyway is decoded).
    if (!this.masker.empty) setHeader(this.forwardHeaders, 'accept-encoding', 'identity');
    const [protocol, method] = [protocolOfPath(path.split('?')[0]!), req.method ?? 'GET'];
    const dropped = [...new Set([...split.dropped, ...swap.removed])].sort();
    this.meta = { seq, transport: 'http', protocol, method, path: this.masker.maskText(redactPath(path)), upstream_path: this.masker.maskText(redactPath(sent)), started_at: Date.now(), identity: split.identity, dropped };
    if (split.contentEncoding !== undefined) this.meta.content_encoding = split.contentEncoding;
    this.target = target.ok ? sent : undefined;
    this.refusal = target.ok ? undefined : target.reason;
    this.unadmitted = !(swap.admitted || query.admitted);
  }

  /** Under key custody, the request did not carry the stand-in credential. */
  private readonly unadmitted: boolean;

  start(): void {
    const declared = Number(this.req.headers['content-length'] ?? 0);
    if (this.refusal !== undefined) return this.refuse(400, 'roller_bad_request_target', `${this.refusal}; only a path on the configured upstream can be requested`, 'refused: bad request target');
    if (this.unadmitted) {
      const message = "roller proxy: this request does not carry the stand-in credential roller gave the harness, so it is refused (something other than roller's configuration set the client's credential or endpoint)";
      return this.refuse(401, 'roller_credential_refused', message, 'refused: no stand-in credential', {}, { code: ErrorCode.CREDENTIAL_REFUSED, message });
    }
    if (declared > this.ctx.maxRequestBytes) return this.tooLarge();
    const budget = this.ctx.budget;
    const held = Math.min(declared, this.ctx.streamBodiesOver); // a longer body is streamed past this
    if (held > budget.limit) return this.busy(`a request body of ${mb(declared)} can never fit the proxy's limit of ${mb(budget.limit)} held at once; raise maxBufferedBytes`);
    this.res.on('close', () => this.clientClosed());
    // Bytes are budgeted as they arrive: a client that declares a large body and trickles it holds only what it sent,
    // and a bodyless or small request never waits behind a declared length.
    this.req.on('data', (chunk: Buffer) => this.bodyChunk(chunk));
    this.req.once('end', () => void this.bodyEnd());
  }

  private release(): void {
    clearTimeout(this.waitTimer);
    this.leaveQueue?.();
    this.leaveQueue = undefined;
    this.waiting = undefined;
    this.ctx.budget.give(this.reserved);
    this.reserved = 0;
  }

  private bodyChunk(chunk: Buffer): void {
    if (this.bodyDone || this.finished) return;
    if (this.waiting) return void this.waiting.push(chunk); // behind the chunk that waits for room
    if (this.received + chunk.length > this.ctx.maxRequestBytes) return this.tooLarge();
    if (this.received + chunk.length > this.ctx.streamBodiesOver) {
      this.received += chunk.length;
      this.parts.push(chunk);
      return this.streamTheRest();
    }
    const budget = this.ctx.budget;
    if (this.reserved + chunk.length > budget.limit) return this.busy(`a request body past ${mb(budget.limit)}, the proxy's limit of request bytes held at once, can never fit; raise maxBufferedBytes`);
    const small = this.reserved + chunk.length <= SMALL_BODY_BYTES;
    if (!budget.tryTake(chunk.length) && !(small && budget.tryTakeSmall(chunk.length))) return this.waitForRoom(chunk);
    this.hold(chunk);
  }

  private hold(chunk: Buffer): void {
    this.received += chunk.length;
    this.reserved += chunk.length;
    this.parts.push(chunk);
  }

  /** No room in the budget for this chunk: the client's socket is paused (TCP holds it back) until there is, bounded. */
  private waitForRoom(chunk: Buffer): void {
    const budget = this.ctx.budget;
    this.waiting = [chunk];
    this.req.pause();
    this.waitTimer = setTimeout(() => this.busy(`the proxy has held ${mb(budget.held)} of request bodies (its limit) for ${this.ctx.budgetWaitMs} ms; retry shortly, or raise maxBufferedBytes`), this.ctx.budgetWaitMs);
    this.leaveQueue = budget.take(chunk.length, () => {
      clearTimeout(this.waitTimer);
      this.leaveQueue = undefined;
      const [first, ...rest] = this.waiting ?? [];
      this.waiting = undefined;
      if (!first || this.finished) return void (first && budget.give(first.length));
      this.hold(first);
      for (const c of rest) this.bodyChunk(c);
      if (this.waiting || this.bodyDone) return;
      this.req.resume();
      if (this.endedWhileWaiting) void this.bodyEnd();
    });
  }

  /** The body is too large to hold whole: what came so far is logged, the rest follows chunk by chunk. */
  private streamTheRest(): void {
    this.bodyDone = true;
    this.req.removeAllListeners('data');
    this.req.removeAllListeners('end');
    this.req.pause();
    const head = this.withBodyFields(this.parts);
    this.parts = [];
    this.meta.body_streamed = true;
    this.log(head);
    void this.forward(this.streamedBody(head));
  }

  /** The body as undici pulls it: each chunk after the head is on disk before it is handed over. */
  private async *streamedBody(head: readonly Buffer[]): AsyncGenerator<Buffer> {
    yield* head; // logged, and on disk before forward() dispatched
    for await (const chunk of this.req as AsyncIterable<Buffer>) {
      if (this.finished) return;
      this.received += chunk.length;
      if (this.received > this.ctx.maxRequestBytes) {
        const message = `request body over ${this.ctx.maxRequestBytes} bytes; raise maxRequestBytes`;
        this.streamRefusal = { status: 413, type: 'roller_request_too_large', message: `roller proxy: ${message}`, error: { code: ErrorCode.REQUEST_TOO_LARGE, message } };
        throw new Error(message);
      }
      this.ctx.wire.append(this.callId, 'b', undefined, chunk);
      try {
        await this.onDisk();
      } catch (err) {
        // Fail closed mid-body too: the rest is not forwarded unrecorded.
        const message = `roller proxy: recording failed, so nothing more is forwarded: ${(err as Error).message}`;
        this.streamRefusal = { status: 503, type: 'roller_capture_failed', message, error: { code: ErrorCode.WIRE_LOG_WRITE_FAILED, message } };
        throw err;
      }
      yield chunk;
    }
    this.ctx.wire.append(this.callId, 'b', { end: true });
  }

  /** Resolves once everything appended is written (and the log under its high-water mark); throws if it cannot be. */
  private async onDisk(): Promise<void> {
    if (this.ctx.wire.backedUp) await this.ctx.wire.drained();
    if (!this.ctx.wire.flushNow()) await this.ctx.wire.flushed();
  }

  private busy(message: string): void {
    this.refuse(503, 'roller_proxy_busy', message, 'refused: the proxy holds its limit of request bytes', { 'retry-after': '1' });
  }

  private tooLarge(): void {
    const message = `request body over ${this.ctx.maxRequestBytes} bytes; raise maxRequestBytes`;
    this.refuse(413, 'roller_request_too_large', `roller proxy: ${message}`, 'too large', {}, { code: ErrorCode.REQUEST_TOO_LARGE, message });
  }

  /** Answers the client itself; the request is logged without its body, with why. */
  private refuse(status: number, type: string, message: string, omitted: string, headers: Record<string, string> = {}, error?: RecordedError): void {
    this.bodyDone = true;
    this.parts = [];
    this.req.removeAllListeners('data');
    this.req.resume(); // the rest is read and dropped, so the client can read the answer
    if (error) this.errors.push(error);
    this.meta.body_omitted = omitted;
    jsonError(this.res, status, type, message, headers);
    this.log();
    this.finish(false, `not forwarded: ${message}`);
  }

  private log(body?: readonly Buffer[]): void {
    this.logged = true;
    this.ctx.wire.append(this.callId, 'q', this.meta, body);
  }

  private async bodyEnd(): Promise<void> {
    if (this.bodyDone || this.finished) return;
    if (this.waiting) return void (this.endedWhileWaiting = true);
    this.bodyDone = true;
    // The body's chunks as they came: logged and forwarded without a copy joining them.
    const body = this.withBodyFields(this.parts);
    this.parts = [];
    this.log(body);
    // Several chunks go as an iterable (undici takes one; its types name only single bodies).
    await this.forward(body.length === 0 ? null : body.length === 1 ? body[0]! : (body as unknown as Buffer));
  }

  /** The body with the upstream's body fields (Chat Completions requests only), its content-length to match. */
  private withBodyFields(parts: Buffer[]): Buffer[] {
    const fields = this.ctx.upstream.bodyFields;
    if (Object.keys(fields).length === 0 || this.meta.protocol !== 'openai-chat-completions' || this.meta.method !== 'POST') return parts;
    const added = withBodyFields(parts, fields);
    if (!added) return parts;
    const declared = Number(this.req.headers['content-length']);
    if (Number.isFinite(declared) && hasHeader(this.forwardHeaders, 'content-length')) setHeader(this.forwardHeaders, 'content-length', String(declared + added.added));
    return added.parts;
  }

  /** Sends the request upstream once its logged frame is on disk. */
  private async forward(body: Buffer | AsyncIterable<Buffer> | null): Promise<void> {
    try {
      await this.onDisk();
    } catch (err) {
      // Fail closed: a request the log cannot hold is not forwarded.
      captureFailed(this.res, err as Error);
      return this.finish(false, 'not forwarded: the wire log cannot be written');
    }
    if (this.finished) return;
    if (this.clientAborted) return this.finish(false, null);
    // undici reports every failure, even a synchronous one, through onResponseError.
    this.ctx.pool.dispatch(
      {
        path: this.target!,
        method: this.meta.method as Dispatcher.HttpMethod,
        headers: this.forwardHeaders,
        body: body as Buffer | null,
        headersTimeout: this.ctx.upstreamHeadersTimeoutMs,
        bodyTimeout: this.ctx.upstreamBodyTimeoutMs,
      },
      this,
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.clientAborted) controller.abort(new Error('the client went away'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, _headers: unknown, statusMessage?: string): void {
    if (statusCode < 200 || this.finished) return; // 1xx: informational, not the response
    this.status = statusCode;
    this.headersSeen = true;
    this.release(); // the upstream has the request: its bytes are garbage now
    const head = splitResponseHead((controller.rawHeaders ?? []) as Buffer[]);
    if (!this.masker.empty) {
      this.mask = new ResponseMask(this.masker, head, this.ctx.maxDecodedResponseBytes, (chunk) => this.deliver(controller, chunk), (error) => {
        this.errors.push(error);
        controller.abort(new Error(error.message));
      });
    }
    this.ctx.wire.append(this.callId, 'r', { status: statusCode, headers: head.recorded });
    if (this.clientAborted) return;
    try {
      this.res.writeHead(statusCode, statusMessage, head.forClient);
    } catch (err) {
      // A header node refuses to send (bytes no client may get): the client gets a 502 that says which.
      this.errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: `the response head could not be relayed: ${(err as Error).message}` });
      controller.abort(err as Error);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.firstByteAt ??= Date.now();
    if (this.mask) this.mask.push(chunk);
    else this.deliver(controller, chunk);
  }

  /** Response bytes (masked) to the client, then to the log; either one backed up pauses the upstream read. */
  private deliver(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (chunk.length === 0 || this.finished) return;
    if (!this.clientAborted && !this.res.destroyed && !this.res.write(chunk)) {
      this.waitingForClient = true;
      this.res.once('drain', () => {
        this.waitingForClient = false;
        this.resumeIfClear();
      });
    }
    this.ctx.wire.append(this.callId, 'd', undefined, chunk);
    if (this.ctx.wire.backedUp) {
      this.waitingForLog = true;
      void this.ctx.wire.drained().then(() => {
        this.waitingForLog = false;
        this.resumeIfClear();
      });
    }
    if (this.waitingForClient || this.waitingForLog) controller.pause();
  }

  onResponseEnd(controller: Dispatcher.DispatchController): void {
    if (this.finished) return;
    if (!this.mask) return this.ended();
    const mask = this.mask;
    void (async () => {
      try {
        await mask.end();
      } catch (err) {
        return this.onResponseError(controller, new Error(`the response's content-encoding could not be decoded: ${(err as Error).message}`));
      }
      if (this.finished) return;
      this.ended();
    })();
  }

  private ended(): void {
    if (!this.clientAborted) this.res.end();
    this.finish(true, null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.finished) return;
    let upstreamError: string | null = null;
    const refusal = this.streamRefusal;
    if (refusal && !this.clientAborted) {
      this.errors.push(refusal.error);
      this.req.resume(); // the rest is read and dropped, so the client can read the answer
      jsonError(this.res, refusal.status, refusal.type, refusal.message);
      upstreamError = `not forwarded whole: ${refusal.message}`;
    } else if (!this.clientAborted) {
      const origin = this.ctx.upstream.origin;
      const timedOut = (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT';
      upstreamError = this.headersSeen ? `the response was cut: ${err.message}` : timedOut ? `the model API at ${origin} sent no response head within ${this.ctx.upstreamHeadersTimeoutMs} ms` : err.message;
      this.errors.push({ code: ErrorCode.UPSTREAM_FAILED, message: this.headersSeen || timedOut ? upstreamError : `connecting to ${origin} failed: ${upstreamError}` });
      if (this.headersSeen) this.res.destroy(); // the client must see the cut too, not a clean end
      else if (timedOut) jsonError(this.res, 504, 'roller_upstream_timeout', `roller proxy: ${upstreamError}`);
      else jsonError(this.res, 502, 'roller_upstream_unreachable', `roller proxy: the model API at ${origin} could not be reached (${upstreamError})`);
    }
    this.finish(false, upstreamError);
  }

  private resumeIfClear(): void {
    if (!this.waitingForClient && !this.waitingForLog && !this.finished) this.controller?.resume();
  }

  /** The client's connection closed: before the response was finished, that is an abort. */
  private clientClosed(): void {
    if (this.res.writableFinished || this.finished) return;
    this.clientAborted = true;
    this.waitingForClient = false;
    this.resumeIfClear(); // it will never drain: the upstream read goes on until the abort lands
    if (this.controller) this.controller.abort(new Error('the client went away')); // undici answers with onResponseError
    else if (!this.logged) {
      this.bodyDone = true;
      this.parts = [];
      this.meta.body_omitted = 'the client aborted before the body ended';
      this.log();
      this.finish(false, null);
    }
    // Otherwise the request is on its way (bodyEnd or onRequestStart sees the abort).
  }

  private finish(upstreamEnded: boolean, upstreamError: string | null): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    const errors = this.masker.maskValue(this.errors);
    const end: EndMeta = { first_byte_at: this.firstByteAt, ended_at: Date.now(), upstream_ended: upstreamEnded, client_aborted: this.clientAborted, upstream_error: upstreamError === null ? null : this.masker.maskText(upstreamError), errors };
    if (this.logged) this.ctx.wire.append(this.callId, 'x', end);
    this.ctx.onExchange?.({ seq: this.meta.seq, method: this.meta.method, path: this.meta.path.split('?')[0]!, protocol: this.meta.protocol, status: this.status, ms: end.ended_at - this.meta.started_at, error: end.upstream_error ?? errors[0]?.message ?? null });
    this.ctx.done(this);
  }

  /** A bug in the proxy itself (never an input's fault): the client gets a 500 that says so, the call is recorded. */
  fail(err: unknown): void {
    if (this.finished) return;
    const message = `roller proxy internal error: ${(err as Error)?.message ?? String(err)}`;
    this.errors.push({ code: ErrorCode.PROXY_INTERNAL, message });
    this.controller?.abort(new Error(message));
    if (!this.clientAborted) jsonError(this.res, 500, 'roller_proxy_error', message);
    if (!this.logged) this.log();
    this.finish(false, message);
  }
}

