import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

/** A response as it came over the wire: the status, the header lines in order, the body (chunked framing undone). */
export interface RawResponse {
  status: number;
  headers: [string, string][];
  chunked: boolean;
  body: Buffer;
}

/**
 * A client connection that writes bytes as given and reads responses one by one (HTTP/1.1 framing: chunked, a length,
 * none for HEAD/204/304, or up to the close) — the view a test needs of what the proxy put on the wire.
 */
export class RawClient {
  private buffer = Buffer.alloc(0);
  private closed = false;
  private waiting: (() => void) | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    socket.on('error', () => {});
  }

  static async connect(url: string): Promise<RawClient> {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    await once(socket, 'connect');
    return new RawClient(socket);
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The connection's end (the peer closed it). */
  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((r) => (this.waiting = r));
  }

  /** The next response; `method` says whether it can have a body (HEAD cannot). */
  async response(method = 'POST'): Promise<RawResponse> {
    for (;;) {
      const parsed = parseResponse(this.buffer, method, this.closed);
      if (parsed) {
        this.buffer = this.buffer.subarray(parsed.used);
        return parsed.response;
      }
      if (this.closed) throw new Error(`the connection closed before a whole response: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      await new Promise<void>((r) => (this.waiting = r));
    }
  }
}

function parseResponse(buffer: Buffer, method: string, closed: boolean): { response: RawResponse; used: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = buffer.toString('latin1', 0, end).split('\r\n');
  const status = Number(statusLine!.split(' ')[1]);
  const headers = lines.map((l): [string, string] => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
  const get = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
  let at = end + 4;
  if (method === 'HEAD' || status === 204 || status === 304 || status < 200) return { response: { status, headers, chunked: false, body: Buffer.alloc(0) }, used: at };
  if (get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd === -1) return undefined;
      const size = parseInt(buffer.toString('latin1', at, lineEnd), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      at = lineEnd + 2 + size + 2;
      if (size === 0) return { response: { status, headers, chunked: true, body: Buffer.concat(parts) }, used: at };
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    }
  }
  const length = get('content-length');
  if (length !== undefined) {
    if (buffer.length < at + Number(length)) return undefined;
    return { response: { status, headers, chunked: false, body: buffer.subarray(at, at + Number(length)) }, used: at + Number(length) };
  }
  if (!closed) return undefined;
  return { response: { status, headers, chunked: false, body: buffer.subarray(at) }, used: buffer.length };
}

/** A request as bytes: a body with its length, or (`chunked`) the same body in two chunks — a request the front hands to node. */
export function rawRequest(method: string, path: string, body: string, options: { chunked?: boolean; headers?: string[] } = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...(options.headers ?? [])];
  if (options.chunked) {
    const half = body.length >> 1;
    const chunks = [body.slice(0, half), body.slice(half)].filter((c) => c.length > 0);
    return `${[...lines, 'transfer-encoding: chunked'].join('\r\n')}\r\n\r\n${chunks.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join('')}0\r\n\r\n`;
  }
  return `${[...lines, `content-length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`;
}
