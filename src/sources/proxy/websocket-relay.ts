import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { ErrorCode } from '../../core/errors.js';
import type { SecretMasker } from '../../core/secret-masker.js';
import type { RecordedError } from '../../schemas/common.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { isObject } from '../../transforms/protocols/types.js';
import { swapCredential, swapQueryCredential, type CredentialCustody } from './credential.js';
import { splitRequestHeaders, type CorrelationHeaders } from './headers.js';
import { redactPath, requestPath, upstreamPath, type UpstreamTarget } from './request-target.js';
import type { EndMeta, RequestMeta, WireLogWriter } from './wire-log.js';

/** What the relay needs from the proxy that owns it. */
export interface RelayContext {
  upstream: UpstreamTarget & { basicAuth: string | undefined };
  correlation: CorrelationHeaders | undefined;
  custody: CredentialCustody | undefined;
  masker: SecretMasker;
  wire: WireLogWriter;
  nextCall(): { callId: string; seq: number };
  /** The proxy's count of what is in flight (close() waits for it). */
  track: { add(x: object): void; done(x: object): void };
  handshakeTimeoutMs: number;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done', 'error']);
/** ws sets these itself on the upstream handshake; extensions are not offered so frames stay uncompressed. */
const HANDSHAKE_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-accept']);
/**
 * One WebSocket message at most (32 MB, the largest request body a model API takes): past it the connection is closed
 * (1009). A message is held whole (ws assembles it), so this bounds what one client costs.
 */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 32 << 20;
/** What a client may send before the upstream accepted the upgrade: past it, the connection is refused. */
const MAX_EARLY_BYTES = 1 << 20;
/** A message larger than this is logged in pieces, each on disk before the next, so other exchanges' frames interleave. */
const LOG_PIECE_BYTES = 1 << 20;
/** Bytes sent one way and not yet written to the other side's socket before the sending side is paused. */
const RELAY_HIGH_WATER_BYTES = 8 << 20;
const clients = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false, maxPayload: MAX_WEBSOCKET_MESSAGE_BYTES });

/** 1005 (no status) and 1006 (abnormal) describe a close but may not be sent in one (RFC 6455 §7.4.1). */
function sendableCloseCode(code: number): number {
  return code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}

function refuse(socket: Socket, status: number, reason: string, why = ''): void {
  const body = why ? JSON.stringify({ type: 'error', error: { type: 'roller_websocket_refused', message: why } }) : '';
  if (!socket.writable) return void socket.destroy();
  const response = `HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-roller-proxy: websocket-refused\r\n\r\n${body}`;
  socket.end(response, () => socket.destroy());
}

/**
 * Relays a Responses-over-WebSocket session (Codex, Pi) to the configured upstream and records it: every
 * `response.create` the client sends starts a call (its payload is the context), and the upstream's event frames
 * until the terminal one are its response, one frame per message in the wire log. A target that is not a path on the
 * upstream is refused (400), as is anything while the wire log cannot be written (503); if the upstream refuses the
 * upgrade, the client gets the same status at once (and falls back to HTTP). Nothing here can throw out of the
 * upgrade handler: a bug answers 500 and closes this one connection.
 */
export function relayWebSocket(req: IncomingMessage, socket: Socket, head: Buffer, ctx: RelayContext, enabled: boolean): void {
  socket.on('error', () => socket.destroy());
  try {
    const target = requestPath(req.url ?? '/');
    if (!target.ok) return refuse(socket, 400, 'Bad Request', `${target.reason}; only a path on the configured upstream can be requested`);
    if (!enabled || protocolOfPath(target.path.split('?')[0]!) !== 'openai-responses') return refuse(socket, 405, 'Method Not Allowed');
    if (ctx.wire.failure) return refuse(socket, 503, 'Service Unavailable', `recording failed, so nothing is forwarded: ${ctx.wire.failure.message}`);
    const origin = new URL(ctx.upstream.origin);
    // The configured host, then a path that starts with '/': no target can move it (the fuzz tests hold this).
    const query = swapQueryCredential(upstreamPath(ctx.upstream, target.path), ctx.custody);
    const url = new URL(`${origin.protocol === 'https:' ? 'wss:' : 'ws:'}//${origin.host}${query.path}`);
    relay(req, socket, head, ctx, url, target.path, query.admitted);
  } catch (err) {
    refuse(socket, 500, 'Internal Server Error', `roller proxy internal error: ${(err as Error).message}`);
  }
}

function relay(req: IncomingMessage, socket: Socket, head: Buffer, ctx: RelayContext, url: URL, path: string, admittedByQuery: boolean): void {
  const split = splitRequestHeaders(req.rawHeaders, ctx.correlation);
  const swap = swapCredential(split.forward, ctx.custody);
  if (!swap.admitted && !admittedByQuery) {
    // Recorded as a refused call, as an HTTP request without the stand-in is.
    const { callId, seq } = ctx.nextCall();
    const message = "roller proxy: this WebSocket does not carry the stand-in credential roller gave the harness, so it is refused";
    ctx.wire.append(callId, 'q', { seq, transport: 'websocket', protocol: 'openai-responses', method: 'GET', path: redactPath(path), upstream_path: redactPath(path), started_at: Date.now(), identity: split.identity, dropped: swap.removed, body_omitted: 'refused: no stand-in credential' });
    ctx.wire.append(callId, 'x', { first_byte_at: null, ended_at: Date.now(), upstream_ended: false, client_aborted: false, upstream_error: `not forwarded: ${message}`, errors: [{ code: ErrorCode.CREDENTIAL_REFUSED, message }] });
    return refuse(socket, 401, 'Unauthorized', message);
  }
  const masker = swap.forwarded.length === 0 ? ctx.masker : ctx.masker.with(swap.forwarded);
  split.dropped = [...new Set([...split.dropped, ...swap.removed])].sort();
  // ws takes a header object: names in lower case, a repeated header joined as node joins it.
  const headers: Record<string, string> = {};
  for (let i = 0; i < swap.forward.length; i += 2) {
    const name = swap.forward[i]!.toLowerCase();
    const value = swap.forward[i + 1]!;
    if (!HANDSHAKE_HEADERS.has(name)) headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  if (ctx.upstream.basicAuth && headers.authorization === undefined) headers.authorization = `Basic ${ctx.upstream.basicAuth}`;
  const session = {};
  ctx.track.add(session);
  const upstream = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: ctx.handshakeTimeoutMs, maxPayload: MAX_WEBSOCKET_MESSAGE_BYTES });
  let upgraded = false;
  let over = false;
  let current: { callId: string; firstByteAt: number | null; errors: RecordedError[] } | undefined;

  const onDisk = async () => {
    if (!ctx.wire.flushNow()) await ctx.wire.flushed();
  };
  /** A request (response.create) starts a call: its payload logged as a body, past LOG_PIECE_BYTES in streamed pieces. */
  const begin = async (payload: Buffer) => {
    const { callId, seq } = ctx.nextCall();
    current = { callId, firstByteAt: null, errors: [] };
    const meta: RequestMeta = { seq, transport: 'websocket', protocol: 'openai-responses', method: 'GET', path: redactPath(path), upstream_path: masker.maskText(redactPath(url.pathname + url.search)), started_at: Date.now(), identity: split.identity, dropped: split.dropped };
    if (payload.length <= LOG_PIECE_BYTES) ctx.wire.append(callId, 'q', meta, payload);
    else {
      // As a streamed HTTP body is: q, b pieces, b end (readers join them), each piece on disk before the next.
      ctx.wire.append(callId, 'q', { ...meta, body_streamed: true }, payload.subarray(0, LOG_PIECE_BYTES));
      for (let at = LOG_PIECE_BYTES; at < payload.length; at += LOG_PIECE_BYTES) {
        await onDisk();
        ctx.wire.append(callId, 'b', undefined, payload.subarray(at, at + LOG_PIECE_BYTES));
      }
      ctx.wire.append(callId, 'b', { end: true });
    }
    ctx.wire.append(callId, 'r', { status: 101, headers: {} });
    return callId;
  };
  /** Any other client message: 'u' frames of the current (or last) call, in pieces as a request's body is. */
  const note = async (callId: string, payload: Buffer, binary: boolean) => {
    const parts = Math.max(1, Math.ceil(payload.length / LOG_PIECE_BYTES));
    for (let part = 0; part < parts; part++) {
      if (part > 0) await onDisk();
      ctx.wire.append(callId, 'u', { binary, at: Date.now(), ...(parts > 1 ? { part, parts } : {}) }, payload.subarray(part * LOG_PIECE_BYTES, (part + 1) * LOG_PIECE_BYTES));
    }
  };
  const end = (how: { upstreamEnded?: boolean; clientAborted?: boolean; upstreamError?: string }) => {
    if (!current) return;
    const { callId, firstByteAt, errors } = current;
    current = undefined;
    const upstreamError = how.upstreamError === undefined ? null : masker.maskText(how.upstreamError);
    const meta: EndMeta = { first_byte_at: firstByteAt, ended_at: Date.now(), upstream_ended: how.upstreamEnded ?? false, client_aborted: how.clientAborted ?? false, upstream_error: upstreamError, errors: masker.maskValue(errors) };
    ctx.wire.append(callId, 'x', meta);
  };
  const finish = () => {
    if (over) return;
    over = true;
    ctx.track.done(session);
  };

  // The client leaves before the upstream accepted: the upstream attempt goes too (no connection is left behind).
  const left = () => {
    if (upgraded) return;
    socket.destroy();
    upstream.terminate();
    finish();
  };
  // Read the socket while the upstream is being asked, or a client's leaving would never be seen (node leaves an
  // upgraded socket unread); anything it sends meanwhile is given back to the stream before the upgrade.
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const hold = (chunk: Buffer) => {
    earlyBytes += chunk.length;
    if (earlyBytes > MAX_EARLY_BYTES) {
      // A client may not pile bytes up here while the upstream is being asked.
      socket.off('data', hold);
      upstream.terminate();
      return refuse(socket, 400, 'Bad Request', `more than ${MAX_EARLY_BYTES} bytes sent before the WebSocket was accepted`);
    }
    early.push(chunk);
  };
  socket.on('data', hold);
  socket.once('end', left);
  socket.once('close', left);
  upstream.once('unexpected-response', (_r, res) => {
    refuse(socket, res.statusCode ?? 502, masker.maskText(res.statusMessage ?? 'Upstream refused the upgrade'));
    res.resume();
    upstream.terminate();
    finish();
  });
  upstream.once('error', (err) => {
    if (!upgraded) refuse(socket, 502, 'Bad Gateway', masker.maskText(`the model API at ${ctx.upstream.origin} refused or failed the WebSocket: ${err.message}`));
    end({ upstreamError: err.message });
    if (!upgraded) finish();
  });
  upstream.once('open', () => {
    if (socket.destroyed) {
      upstream.terminate();
      return finish();
    }
    socket.off('end', left);
    socket.off('data', hold);
    socket.pause();
    if (early.length > 0) socket.unshift(Buffer.concat(early));
    clients.handleUpgrade(req, socket, head, (client) => {
      upgraded = true;
      socket.resume(); // ws reads it from here
      // Client -> upstream in order, each message on disk before it is sent: a request (response.create) starts a call,
      // anything else is recorded as a 'u' frame of the current (or last) call.
      const toUpstream = paced(client, upstream);
      let chain: Promise<void> = Promise.resolve();
      let lastCallId: string | undefined;
      client.on('message', (data: RawData, isBinary: boolean) => {
        const buf = rawBytes(data);
        chain = chain.then(async () => {
          if (ctx.wire.failure) return void client.close(1011, 'roller proxy: recording failed'); // fail closed
          try {
            if (!isBinary && eventType(buf) === 'response.create') {
              if (current) end({ clientAborted: true }); // a new request before the last one ended
              lastCallId = await begin(buf);
            } else {
              lastCallId ??= ctx.nextCall().callId;
              await note(current?.callId ?? lastCallId, buf, isBinary);
            }
            await onDisk();
          } catch {
            return void client.close(1011, 'roller proxy: recording failed');
          }
          toUpstream(buf, isBinary);
        });
      });
      const toClient = paced(upstream, client);
      upstream.on('message', (data: RawData, isBinary: boolean) => {
        // A frame is masked whole (a WebSocket message is never split across two here).
        const buf = masker.maskBytes(rawBytes(data));
        toClient(buf, isBinary);
        if (!current || isBinary) return;
        current.firstByteAt ??= Date.now();
        ctx.wire.append(current.callId, 'd', undefined, buf);
        if (TERMINAL.has(eventType(buf))) end({ upstreamEnded: true });
      });
      client.on('close', (code, reason) => {
        end({ clientAborted: true });
        upstream.close(sendableCloseCode(code), reason);
        finish();
      });
      upstream.on('close', (code, reason) => {
        end({ upstreamError: `the upstream closed the WebSocket (${code})` });
        client.close(sendableCloseCode(code), masker.maskBytes(reason));
      });
      client.on('error', () => upstream.terminate());
    });
  });
}

function rawBytes(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
}

/**
 * Sends to `to` what `from` said, with backpressure: past RELAY_HIGH_WATER_BYTES not yet written to `to`'s socket,
 * `from` is paused (its socket unread), and resumed once half of it is written.
 */
function paced(from: WebSocket, to: WebSocket): (data: Buffer, binary: boolean) => void {
  let queued = 0;
  return (data, binary) => {
    if (to.readyState !== WebSocket.OPEN) return;
    queued += data.length;
    if (queued > RELAY_HIGH_WATER_BYTES && !from.isPaused) from.pause();
    to.send(data, { binary }, () => {
      queued -= data.length;
      if (queued <= RELAY_HIGH_WATER_BYTES / 2 && from.isPaused) from.resume();
    });
  };
}

/**
 * A text frame's `type`: where a request begins (response.create) and a response ends; the projection decodes the
 * rest. A frame that is not JSON is relayed and recorded as it came ('').
 */
function eventType(buf: Buffer): string {
  // Not a JSON object (its first byte past whitespace): no type, and no megabytes turned into a string to learn it.
  let i = 0;
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  if (buf[i] !== 0x7b) return '';
  try {
    const event: unknown = JSON.parse(buf.toString('utf8'));
    return isObject(event) ? String(event.type) : '';
  } catch {
    return '';
  }
}
