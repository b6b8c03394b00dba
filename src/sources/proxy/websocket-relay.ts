import { createHash, randomBytes } from 'node:crypto';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { ErrorCode } from '../../core/errors.js';
import type { SecretMasker } from '../../core/secret-masker.js';
import { protocolOfPath } from '../../transforms/protocols/index.js';
import { queryCredentials, swapCredential, swapQueryCredential, type CredentialCustody } from './credential.js';
import { splitRequestHeaders, type CorrelationHeaders } from './headers.js';
import { redactPath, requestPath, upstreamPath, type UpstreamTarget } from './request-target.js';
import { pump, type Pump } from './websocket-pump.js';
import { FrameError, FrameReader, OPCODE, closePayload, encodeFrame, readClose, type FrameEvent } from './websocket-frames.js';
import { SessionRecording } from './websocket-recording.js';
import type { WireLogWriter } from './wire-log.js';

/** What the relay needs from the proxy that owns it. */
export interface RelayContext {
  upstream: UpstreamTarget & { basicAuth: string | undefined };
  correlation: CorrelationHeaders | undefined;
  identity: CorrelationHeaders | undefined;
  custody: CredentialCustody | undefined;
  masker: SecretMasker;
  wire: WireLogWriter;
  nextCall(): { callId: string; seq: number };
  /** The proxy's count of what is in flight (close() waits for it). */
  track: { add(x: object): void; done(x: object): void };
  handshakeTimeoutMs: number;
}

/** The handshake headers the relay sets itself; extensions are not offered, so frames pass as they are. */
const HANDSHAKE_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-accept']);
/** One WebSocket message at most (32 MB, the largest request body a model API takes): past it, closed with 1009. */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 32 << 20;
/** What a client may send before the upstream accepted the upgrade: past it, the connection is refused. */
const MAX_EARLY_BYTES = 1 << 20;
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const acceptOf = (key: string) => createHash('sha1').update(key + GUID).digest('base64');

function refuse(socket: Socket, status: number, reason: string, why = ''): void {
  const body = why ? JSON.stringify({ type: 'error', error: { type: 'roller_websocket_refused', message: why } }) : '';
  if (!socket.writable) return void socket.destroy();
  const response = `HTTP/1.1 ${status} ${reason.replace(/[\r\n]/g, ' ')}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-roller-proxy: websocket-refused\r\n\r\n${body}`;
  socket.end(response, () => socket.destroy());
}

/**
 * Relays a Responses-over-WebSocket session (Codex, Pi) to the configured upstream and records it (SessionRecording:
 * each `response.create` opens a call, the upstream's events until the terminal one are its response). The frames
 * pass as they came, read as they arrive and never assembled into one buffer: the client's (masked) frames go
 * upstream unchanged once recorded; the upstream's go to the client with known secrets masked in place. A target
 * that is not a path on the upstream is refused (400), as is anything while the wire log cannot be written (503); if
 * the upstream refuses the upgrade, the client gets the same status at once (and falls back to HTTP). Nothing here
 * can throw out of the upgrade handler: a bug answers 500 and closes this one connection.
 */
export function relayWebSocket(req: IncomingMessage, socket: Socket, head: Buffer, ctx: RelayContext, enabled: boolean): void {
  socket.on('error', () => socket.destroy());
  try {
    const target = requestPath(req.url ?? '/');
    if (!target.ok) return refuse(socket, 400, 'Bad Request', `${target.reason}; only a path on the configured upstream can be requested`);
    if (!enabled || protocolOfPath(target.path.split('?')[0]!) !== 'openai-responses') return refuse(socket, 405, 'Method Not Allowed');
    const key = req.headers['sec-websocket-key'];
    if (req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string' || !/^[+/0-9A-Za-z]{22}==$/.test(key.trim()) || req.headers['sec-websocket-version'] !== '13') {
      return refuse(socket, 400, 'Bad Request', 'not a WebSocket handshake (RFC 6455 §4.2.1: GET, Upgrade: websocket, a Sec-WebSocket-Key, Sec-WebSocket-Version: 13)');
    }
    if (ctx.wire.failure) return refuse(socket, 503, 'Service Unavailable', `recording failed, so nothing is forwarded: ${ctx.wire.failure.message}`);
    const origin = new URL(ctx.upstream.origin);
    // The configured host, then a path that starts with '/': no target can move it (the fuzz tests hold this).
    const query = swapQueryCredential(upstreamPath(ctx.upstream, target.path), ctx.custody);
    const url = new URL(`${origin.protocol}//${origin.host}${query.path}`);
    relay(req, socket, head, ctx, url, target.path, query.admitted, key.trim());
  } catch (err) {
    refuse(socket, 500, 'Internal Server Error', `roller proxy internal error: ${(err as Error).message}`);
  }
}

function relay(req: IncomingMessage, socket: Socket, head: Buffer, ctx: RelayContext, url: URL, path: string, admittedByQuery: boolean, clientKey: string): void {
  const split = splitRequestHeaders(req.rawHeaders, ctx.correlation, ctx.identity);
  const swap = swapCredential(split.forward, ctx.custody);
  if (!swap.admitted && !admittedByQuery) {
    // Recorded as a refused call, as an HTTP request without the stand-in is.
    const { callId, seq } = ctx.nextCall();
    const message = "roller proxy: this WebSocket does not carry the stand-in credential roller gave the harness, so it is refused";
    ctx.wire.append(callId, 'q', { seq, transport: 'websocket', protocol: 'openai-responses', method: 'GET', path: redactPath(path), upstream_path: redactPath(path), started_at: Date.now(), identity: split.identity, dropped: swap.removed, body_omitted: 'refused: no stand-in credential' });
    ctx.wire.append(callId, 'x', { first_byte_at: null, ended_at: Date.now(), upstream_ended: false, client_aborted: false, upstream_error: `not forwarded: ${message}`, errors: [{ code: ErrorCode.CREDENTIAL_REFUSED, message }] });
    return refuse(socket, 401, 'Unauthorized', message);
  }
  const secrets = [...swap.forwarded, ...queryCredentials(path), ...queryCredentials(url.search)];
  const masker = secrets.length === 0 ? ctx.masker : ctx.masker.with(secrets);
  const dropped = [...new Set([...split.dropped, ...swap.removed])].sort();
  const upstreamKey = randomBytes(16).toString('base64');
  const headers: Record<string, string> = {};
  for (let i = 0; i < swap.forward.length; i += 2) {
    const name = swap.forward[i]!.toLowerCase();
    const value = swap.forward[i + 1]!;
    if (!HANDSHAKE_HEADERS.has(name)) headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  if (ctx.upstream.basicAuth && headers.authorization === undefined) headers.authorization = `Basic ${ctx.upstream.basicAuth}`;
  for (const [name, value] of ctx.upstream.headers) headers[name] = value;
  Object.assign(headers, { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': upstreamKey });
  const session = {};
  ctx.track.add(session);
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    ctx.track.done(session);
  };
  const recording = new SessionRecording(ctx.wire, ctx.nextCall, masker, {
    transport: 'websocket', protocol: 'openai-responses', method: 'GET', path: redactPath(path),
    upstream_path: masker.maskText(redactPath(url.pathname + url.search)), identity: split.identity, dropped,
  });

  const ask: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
    protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, path: url.pathname + url.search,
    method: 'GET', headers, agent: false,
  });
  ask.setTimeout(ctx.handshakeTimeoutMs, () => ask.destroy(new Error(`no answer to the upgrade in ${ctx.handshakeTimeoutMs / 1000} s`)));
  // The client leaves before the upstream accepted: the upstream attempt goes too (no connection is left behind).
  const left = () => {
    ask.destroy();
    socket.destroy();
    finish();
  };
  // Read the socket while the upstream is being asked, or a client's leaving would never be seen (node leaves an
  // upgraded socket unread); what it sends meanwhile is read first once the relay starts.
  const early: Buffer[] = [head];
  let earlyBytes = head.length;
  const hold = (chunk: Buffer) => {
    earlyBytes += chunk.length;
    early.push(chunk);
    if (earlyBytes <= MAX_EARLY_BYTES) return;
    // A client may not pile bytes up here while the upstream is being asked.
    socket.off('data', hold);
    ask.destroy();
    refuse(socket, 400, 'Bad Request', `more than ${MAX_EARLY_BYTES} bytes sent before the WebSocket was accepted`);
    finish();
  };
  socket.on('data', hold);
  socket.once('end', left);
  socket.once('close', left);
  const stopAsking = () => {
    socket.off('data', hold);
    socket.off('end', left);
    socket.off('close', left);
  };
  ask.once('response', (res) => {
    stopAsking();
    refuse(socket, res.statusCode ?? 502, masker.maskText(res.statusMessage ?? 'Upstream refused the upgrade'));
    res.resume();
    ask.destroy();
    finish();
  });
  ask.once('error', (err) => {
    if (over) return;
    stopAsking();
    refuse(socket, 502, 'Bad Gateway', masker.maskText(`the model API at ${ctx.upstream.origin} refused or failed the WebSocket: ${err.message}`));
    finish();
  });
  ask.once('upgrade', (res, upstream, upstreamHead) => {
    stopAsking();
    upstream.setTimeout(0);
    const wrong =
      res.headers['sec-websocket-accept'] !== acceptOf(upstreamKey) ? 'a Sec-WebSocket-Accept that does not answer the key it was sent'
      : res.headers['sec-websocket-extensions'] ? `an extension it was not offered (${res.headers['sec-websocket-extensions']})`
      : undefined;
    if (socket.destroyed || wrong) {
      upstream.destroy();
      if (wrong) refuse(socket, 502, 'Bad Gateway', masker.maskText(`the model API at ${ctx.upstream.origin} answered the WebSocket upgrade with ${wrong}`));
      return finish();
    }
    const protocol = res.headers['sec-websocket-protocol'];
    socket.write(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${acceptOf(clientKey)}`, ...(protocol ? [`Sec-WebSocket-Protocol: ${protocol}`] : []), '', ''].join('\r\n'));
    relaySession(socket, upstream, Buffer.concat(early), upstreamHead, { recording, masker, wire: ctx.wire }, finish);
  });
  ask.end();
}

/** The upgraded session: both directions pumped frame by frame until both sockets close. */
function relaySession(client: Socket, upstream: Socket, clientEarly: Buffer, upstreamEarly: Buffer, ctx: { recording: SessionRecording; masker: SecretMasker; wire: WireLogWriter }, finish: () => void): void {
  const { recording, masker } = ctx;
  const fromClient = new FrameReader({ expectMasked: true, maxMessageBytes: MAX_WEBSOCKET_MESSAGE_BYTES });
  const fromUpstream = new FrameReader({ expectMasked: false, maxMessageBytes: MAX_WEBSOCKET_MESSAGE_BYTES });
  let upstreamCloseCode: number | undefined;
  let broken = false;

  /** Ends both sides after a broken frame or a failed recording: a close frame to each where one can still be framed. */
  const closeBoth = (toClient: { code: number; reason: string }, toUpstream: { code: number; reason: string }) => {
    if (broken) return;
    broken = true;
    const bye = (socket: Socket, frame: Buffer | null) => {
      if (frame && socket.writable) socket.end(frame);
      else socket.destroy();
      setTimeout(() => socket.destroy(), 2000).unref(); // a peer that never answers the close
    };
    bye(client, fromUpstream.atBoundary ? encodeFrame(OPCODE.close, closePayload(toClient.code, toClient.reason), false) : null);
    bye(upstream, recording.holding || fromClient.atBoundary ? encodeFrame(OPCODE.close, closePayload(toUpstream.code, toUpstream.reason), true) : null);
  };

  // Client -> upstream: each piece on disk before its bytes go on; a message not yet classified holds its bytes back.
  let held: Buffer[] = [];
  const clientToUpstream = async (chunk: Buffer): Promise<Buffer[]> => {
    const out: Buffer[] = [];
    try {
      for (const e of fromClient.push(chunk)) {
        if (e.kind === 'head' && e.head.opcode !== OPCODE.continuation && e.head.opcode < 8) {
          if (ctx.wire.failure) {
            closeBoth({ code: 1011, reason: 'roller proxy: recording failed' }, { code: 1001, reason: 'going away' }); // fail closed
            return [];
          }
          recording.clientMessage(e.head.opcode === OPCODE.binary);
        }
        (recording.holding ? held : out).push(e.raw);
        if (e.kind === 'payload' && e.head.opcode < 8) recording.clientPiece(e.data, e.last && e.head.fin);
        if (!recording.holding && held.length > 0) {
          out.push(...held);
          held = [];
        }
      }
      await recording.onDisk();
    } catch (err) {
      if (!(err instanceof FrameError) && !ctx.wire.failure) throw err;
      recording.end({ clientAborted: true });
      if (err instanceof FrameError) closeBoth({ code: err.closeCode, reason: err.message }, { code: 1001, reason: 'going away' });
      else closeBoth({ code: 1011, reason: 'roller proxy: recording failed' }, { code: 1001, reason: 'going away' });
      return [];
    }
    return out;
  };

  // Upstream -> client: known secrets masked in place (the same length, so each frame's head stays true).
  let control: { raw: Buffer; pieces: Buffer[] } | undefined;
  let frameMask: ReturnType<SecretMasker['stream']> | undefined;
  const upstreamToClient = (chunk: Buffer): Buffer[] => {
    const out: Buffer[] = [];
    try {
      for (const e of fromUpstream.push(chunk)) forwardUpstream(e, out);
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      recording.end({ upstreamError: `the upstream broke the WebSocket protocol: ${err.message}` });
      closeBoth({ code: 1014, reason: 'roller proxy: the upstream broke the protocol' }, { code: err.closeCode, reason: err.message });
    }
    return out;
  };
  const forwardUpstream = (e: FrameEvent, out: Buffer[]) => {
    if (e.head.opcode >= 8) {
      // A control frame (125 bytes at most) is held whole and masked whole.
      if (e.kind === 'head') return void (control = { raw: e.raw, pieces: [] });
      control!.pieces.push(e.data);
      if (!e.last) return;
      const payload = masker.maskBytes(Buffer.concat(control!.pieces));
      if (e.head.opcode === OPCODE.close) upstreamCloseCode = readClose(payload).code;
      out.push(control!.raw, payload);
      control = undefined;
      return;
    }
    if (e.kind === 'head') {
      if (e.head.opcode !== OPCODE.continuation) recording.upstreamMessage(e.head.opcode === OPCODE.text);
      frameMask = masker.stream();
      return void out.push(e.raw);
    }
    out.push(frameMask!.push(e.data));
    if (e.last) out.push(frameMask!.end());
    recording.upstreamPiece(e.data, e.last && e.head.fin);
  };

  const toUpstream: Pump = pump(client, upstream, clientToUpstream);
  const toClient: Pump = pump(upstream, client, upstreamToClient);
  let closed = 0;
  const onClose = (side: 'client' | 'upstream') => {
    if (side === 'client') recording.end({ clientAborted: true });
    else recording.end({ upstreamError: `the upstream closed the WebSocket (${upstreamCloseCode ?? 1006})` });
    // What the closed side sent is passed on, then the other side is ended too.
    const [pending, other] = side === 'client' ? [toUpstream, upstream] : [toClient, client];
    void pending.flushed().then(() => {
      other.end();
      setTimeout(() => other.destroy(), 2000).unref();
    });
    if (++closed === 2) finish();
  };
  client.once('close', () => onClose('client'));
  upstream.once('close', () => onClose('upstream'));
  upstream.on('error', () => upstream.destroy());
  toUpstream.start(clientEarly);
  toClient.start(upstreamEarly);
}
