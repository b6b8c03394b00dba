import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { RecordedError } from '../../schemas/common.js';
import { isObject } from '../../transforms/protocols/types.js';
import { splitRequestHeaders, type NativeIdentityHeaders } from './headers.js';
import type { EndMeta, WireLogWriter } from './wire-log.js';

/** What the relay needs from the proxy that owns it. */
export interface RelayContext {
  upstream: URL;
  basePath: string;
  correlation: Readonly<Record<string, keyof NativeIdentityHeaders>> | undefined;
  wire: WireLogWriter;
  nextCall(): { callId: string; seq: number };
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done', 'error']);
/** ws sets these itself on the upstream handshake; extensions are not offered so frames stay uncompressed. */
const HANDSHAKE_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-accept']);

/** 1005 (no status) and 1006 (abnormal) describe a close but may not be sent in one (RFC 6455 §7.4.1). */
function sendableCloseCode(code: number): number {
  return code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}

function refuse(socket: Socket, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-length: 0\r\nx-roller-proxy: websocket-refused\r\n\r\n`);
}

/**
 * Relays a Responses-over-WebSocket session (Codex, Pi) to the upstream and records it: every
 * `response.create` the client sends starts a call (its payload is the context), and the upstream's
 * event frames until the terminal one are its response, kept in the wire log one frame per message (and
 * decoded like SSE events by the projection).
 * If the upstream refuses the upgrade, the client gets the same status at once (and falls back to HTTP).
 */
export function relayWebSocket(req: IncomingMessage, socket: Socket, head: Buffer, ctx: RelayContext): void {
  const url = req.url ?? '/';
  const split = splitRequestHeaders(req.rawHeaders, ctx.correlation);
  // ws takes a header object: names in lower case, a repeated header joined as node joins it.
  const headers: Record<string, string> = {};
  for (let i = 0; i < split.forward.length; i += 2) {
    const name = split.forward[i]!.toLowerCase();
    const value = split.forward[i + 1]!;
    if (!HANDSHAKE_HEADERS.has(name)) headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const target = new URL(ctx.basePath + url, ctx.upstream);
  target.protocol = ctx.upstream.protocol === 'https:' ? 'wss:' : 'ws:';
  const upstream = new WebSocket(target, { headers, perMessageDeflate: false });
  let current: { callId: string; firstByteAt: number | null; errors: RecordedError[] } | undefined;

  const begin = (text: string) => {
    const { callId, seq } = ctx.nextCall();
    current = { callId, firstByteAt: null, errors: [] };
    ctx.wire.opened();
    const meta = {
      seq,
      transport: 'websocket' as const,
      protocol: 'openai-responses' as const,
      method: 'GET',
      path: url,
      upstream_path: ctx.basePath + url,
      started_at: Date.now(),
      identity: split.identity,
      dropped: split.dropped,
    };
    ctx.wire.appendRequest(callId, meta, Buffer.from(text, 'utf8'));
    ctx.wire.append(callId, 'r', { status: 101, headers: {} });
  };
  const end = (how: { upstreamEnded?: boolean; clientAborted?: boolean; upstreamError?: string }) => {
    if (!current) return;
    const { callId, firstByteAt, errors } = current;
    current = undefined;
    const meta: EndMeta = {
      first_byte_at: firstByteAt,
      ended_at: Date.now(),
      upstream_ended: how.upstreamEnded ?? false,
      client_aborted: how.clientAborted ?? false,
      upstream_error: how.upstreamError ?? null,
      errors,
    };
    ctx.wire.appendEnd(callId, meta);
    ctx.wire.ended();
  };

  upstream.once('unexpected-response', (_r, res) => {
    refuse(socket, res.statusCode ?? 502, res.statusMessage ?? 'Upstream refused the upgrade');
    res.resume();
  });
  upstream.once('error', (err) => {
    if (socket.writable && !upgraded) refuse(socket, 502, 'Bad Gateway');
    end({ upstreamError: err.message });
  });
  let upgraded = false;
  upstream.once('open', () => {
    const server = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    server.handleUpgrade(req, socket, head, (client) => {
      upgraded = true;
      client.on('message', (data: RawData, isBinary: boolean) => {
        const text = isBinary ? undefined : data.toString();
        if (text !== undefined) {
          try {
            const payload: unknown = JSON.parse(text);
            if (isObject(payload) && payload.type === 'response.create') {
              if (current) end({ clientAborted: true }); // a new request before the last one ended
              begin(text);
            }
          } catch {
            // not JSON: relayed as is, not a model request
          }
        }
        upstream.send(data, { binary: isBinary });
      });
      upstream.on('message', (data: RawData, isBinary: boolean) => {
        client.send(data, { binary: isBinary });
        if (!current || isBinary) return;
        const buf = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
        current.firstByteAt ??= Date.now();
        ctx.wire.append(current.callId, 'd', undefined, buf);
        // Only the event type is needed here (where a response ends); the projection decodes the rest.
        try {
          const event: unknown = JSON.parse(buf.toString('utf8'));
          if (isObject(event) && TERMINAL.has(String(event.type))) end({ upstreamEnded: true });
        } catch {
          // recorded as it came; the projection reports a frame that is not JSON
        }
      });
      client.on('close', (code, reason) => {
        end({ clientAborted: true });
        upstream.close(sendableCloseCode(code), reason);
      });
      upstream.on('close', (code, reason) => {
        end({ upstreamError: `the upstream closed the WebSocket (${code})` });
        client.close(sendableCloseCode(code), reason);
      });
      client.on('error', () => upstream.terminate());
    });
  });
}
