import { STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientBody, ClientReply, ClientRequestHead } from './http-exchange.js';

/**
 * The recording proxy's HTTP/1.1 front: it serves the requests harnesses send — a plain HTTP/1.1 request line, headers
 * in the strict grammar, a body of a declared length — itself, straight on the socket, and hands any connection whose
 * next request is anything else (chunked or expect-continue bodies, upgrades, HTTP/1.0, absolute or `*` targets, a
 * missing Host, obsolete line folding, a head over 16 KB) to node's http server, which answers it as it always has.
 *
 * Why: under load the proxy's own CPU is most of what recording costs, and node's server spends ~10 µs per request on
 * objects this path does not need (an IncomingMessage and a ServerResponse with their streams, header objects, per-
 * request timers); the front reads the head once, as latin1, and writes the response head and first chunk with one
 * writev. What a client sees is what node would send: the same status line, the upstream's headers (hop-by-hop ones
 * removed by the exchange), Date when the upstream sent none, Connection and Keep-Alive, chunked framing when the
 * upstream gave no length.
 */

/** node's default --max-http-header-size: a longer head goes to node, which answers 431. */
export const MAX_HEAD_BYTES = 16 << 10;

const CRLF_CRLF = Buffer.from('\r\n\r\n');
/** Bytes of later requests held while a response is on its way, at most (then the socket is paused). */
const PIPELINED_BYTES = 1 << 20;

/**
 * A request head the front serves: method, origin-form target, HTTP/1.1, then header lines (a token, a colon, a value
 * of visible characters, spaces, tabs and obs-text) — nothing else, no empty line first. The grammar is checked whole by
 * one linear expression (no nested ambiguity: a line cannot hold CR or LF), so the split that follows meets only
 * well-formed lines.
 */
const STRICT_HEAD = /^[A-Z]+ \/[\x21-\x7e]* HTTP\/1\.1(?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*)*$/;

export interface FrontRequest extends ClientRequestHead {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[];
  /** Body bytes that follow the head. */
  readonly contentLength: number;
  /** The client asked to close the connection after this response. */
  readonly close: boolean;
  /** A HEAD request: its response has no body. */
  readonly isHead: boolean;
}

/**
 * The request in `text` (the head without its final empty line, as latin1) when the front serves it, else undefined: the
 * connection goes to node from this request on.
 */
export function parseRequestHead(text: string): FrontRequest | undefined {
  if (!STRICT_HEAD.test(text)) return undefined;
  const lines = text.split('\r\n');
  const requestLine = lines[0]!;
  const sp1 = requestLine.indexOf(' ');
  const sp2 = requestLine.indexOf(' ', sp1 + 1);
  const method = requestLine.slice(0, sp1);
  const url = requestLine.slice(sp1 + 1, sp2);
  const rawHeaders: string[] = [];
  let contentLength = 0;
  let lengthSeen = false;
  let host = false;
  let close = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const value = trimSpaces(line, colon + 1);
    rawHeaders.push(name, value);
    switch (name.toLowerCase()) {
      case 'content-length':
        // One length of digits only (node refuses the rest, or sums repeats in ways not worth copying).
        if (lengthSeen || !/^\d{1,15}$/.test(value)) return undefined;
        lengthSeen = true;
        contentLength = Number(value);
        break;
      case 'host':
        host = true;
        break;
      case 'connection': {
        const tokens = value.toLowerCase();
        if (tokens.includes('upgrade')) return undefined;
        if (/(?:^|[\s,])close(?:$|[\s,])/.test(tokens)) close = true;
        break;
      }
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return undefined;
    }
  }
  if (!host) return undefined; // node answers 400, as HTTP/1.1 requires
  return { method, url, rawHeaders, contentLength, close, isHead: method === 'HEAD' };
}

/** line[from, end) without the spaces and tabs around it (what node strips from a header value; not String#trim's set). */
function trimSpaces(line: string, from: number): string {
  let start = from;
  let end = line.length;
  while (start < end && (line.charCodeAt(start) === 32 || line.charCodeAt(start) === 9)) start++;
  while (end > start && (line.charCodeAt(end - 1) === 32 || line.charCodeAt(end - 1) === 9)) end--;
  return start === from && end === line.length ? line.slice(from) : line.slice(start, end);
}

/** What the front does with what it reads. */
export interface FrontHandler {
  /**
   * A request the front serves: the exchange that takes its body and answers through `reply` (undefined when none could
   * be opened: the reply is answered already).
   */
  request(head: FrontRequest, reply: FrontReply, body: ClientBody): FrontExchange | undefined;
  /** From this request on, node's http server serves the connection (the request's bytes are back in the socket). */
  handOff(socket: Socket): void;
}

export interface FrontExchange {
  bodyChunk(chunk: Buffer): void;
  bodyEnd(): void;
  clientClosed(): void;
}

/** The Date header node sends, computed once a second. */
let dateText = '';
let dateSecond = -1;
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/**
 * One response on a front connection: the head is built at writeHead and goes out with the first chunk (or the end) in
 * one writev; a body without a declared length is sent chunked. No body for HEAD, 1xx, 204 and 304, as node does.
 */
export class FrontReply implements ClientReply {
  headersSent = false;
  private finished = false;
  private head: string | null = null;
  private chunked = false;
  private noBody = false;

  constructor(
    private readonly connection: FrontConnection,
    private readonly socket: Socket,
    private readonly request: FrontRequest,
    private readonly keepAliveSeconds: number,
  ) {}

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  get writableFinished(): boolean {
    return this.finished;
  }

  get closesConnection(): boolean {
    return this.request.close;
  }

  writeHead(status: number, headers: string[]): void {
    if (this.headersSent) throw new Error('roller proxy: a response head was already given');
    let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    let length = false;
    let date = false;
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      // node's own checks, as its writeHead makes them: a name that is no token or a value with a control character throws.
      validateHeaderName(name);
      validateHeaderValue(name, value);
      text += `${name}: ${value}\r\n`;
      if (name.length === 14 && name.toLowerCase() === 'content-length') length = true;
      else if (name.length === 4 && name.toLowerCase() === 'date') date = true;
    }
    this.headersSent = true;
    this.noBody = this.request.isHead || status === 204 || status === 304 || (status >= 100 && status < 200);
    // What node adds, in node's order and spelling: Date, Connection (and Keep-Alive), then chunked framing.
    if (!date) text += `Date: ${httpDate()}\r\n`;
    text += this.request.close ? 'Connection: close\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${this.keepAliveSeconds}\r\n`;
    if (!length && !this.noBody) {
      this.chunked = true;
      text += 'Transfer-Encoding: chunked\r\n';
    }
    this.head = `${text}\r\n`;
  }

  write(chunk: Buffer): boolean {
    if (this.finished || this.socket.destroyed) return true;
    if (this.noBody || chunk.length === 0) return true;
    const socket = this.socket;
    socket.cork();
    if (this.head !== null) {
      socket.write(this.head, 'latin1');
      this.head = null;
    }
    if (this.chunked) {
      socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
      socket.write(chunk);
      socket.write('\r\n', 'latin1');
    } else socket.write(chunk);
    socket.uncork();
    return !socket.writableNeedDrain;
  }

  end(body?: string): void {
    if (this.finished) return;
    if (!this.headersSent) this.writeHead(200, ['content-length', '0']);
    if (body !== undefined && body.length > 0) this.write(Buffer.from(body, 'utf8'));
    this.finished = true;
    const socket = this.socket;
    if (!socket.destroyed) {
      socket.cork();
      if (this.head !== null) {
        socket.write(this.head, 'latin1');
        this.head = null;
      }
      if (this.chunked) socket.write('0\r\n\r\n', 'latin1');
      socket.uncork();
    }
    this.connection.replied(this);
  }

  destroy(): void {
    this.finished = true;
    this.socket.destroy();
  }

  once(event: 'drain', listener: () => void): void {
    this.socket.once(event, listener);
  }

  off(event: 'drain', listener: () => void): void {
    this.socket.off(event, listener);
  }
}

/**
 * One client connection of the front: heads parsed, bodies delivered as they arrive, one exchange at a time (bytes of a
 * pipelined request wait until the response before them is done), an idle connection closed after the keep-alive time.
 */
export class FrontConnection {
  /** Bytes read and not yet parsed (a head in pieces, or a pipelined request). */
  private pending: Buffer | null = null;
  private exchange: FrontExchange | undefined;
  private reply: FrontReply | undefined;
  /** Body bytes of the current request still to come. */
  private bodyLeft = 0;
  /** The exchange stopped taking its body: the rest is read and dropped. */
  private dropBody = false;
  private closing = false;
  private handedOff = false;
  private readonly body: ClientBody = { stop: () => (this.dropBody = true) };

  constructor(
    readonly socket: Socket,
    private readonly handler: FrontHandler,
    private readonly keepAliveMs: number,
  ) {
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
    socket.on('error', ignore); // 'close' follows
    socket.setTimeout(keepAliveMs);
  }

  /** Busy with a request (its head is in, its response not done). */
  get busy(): boolean {
    return this.reply !== undefined;
  }

  /** The server is closing: an idle connection ends now, a busy one after its response. */
  close(): void {
    this.closing = true;
    if (!this.busy && !this.handedOff) this.socket.end();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.bodyLeft > 0) {
      const take = Math.min(this.bodyLeft, chunk.length);
      this.bodyLeft -= take;
      if (!this.dropBody) this.exchange?.bodyChunk(take === chunk.length ? chunk : chunk.subarray(0, take));
      if (this.bodyLeft === 0) this.bodyDone();
      if (take === chunk.length) return;
      chunk = chunk.subarray(take);
    }
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.busy) this.parse();
    // A client that pipelines more than this while a response is on its way waits (node pauses such a socket too).
    else if (this.pending.length > PIPELINED_BYTES) this.socket.pause();
  };

  /** Reads the next request from `pending`, if its head is complete (one at a time: the caller checked none is busy). */
  private parse(): void {
    const buffer = this.pending;
    if (buffer === null || this.handedOff || this.closing) return;
    const end = buffer.indexOf(CRLF_CRLF);
    if (end === -1) {
      if (buffer.length > MAX_HEAD_BYTES) this.handOff();
      return;
    }
    const request = end <= MAX_HEAD_BYTES ? parseRequestHead(buffer.toString('latin1', 0, end)) : undefined;
    if (request === undefined) return this.handOff();
    const reply = new FrontReply(this, this.socket, request, Math.floor(this.keepAliveMs / 1000));
    this.reply = reply;
    this.dropBody = false;
    this.bodyLeft = request.contentLength;
    this.pending = null;
    const exchange = this.handler.request(request, reply, this.body);
    // (Unless it was answered already: a request the proxy failed to take is replied to before this returns.)
    if (this.reply === reply) this.exchange = exchange;
    const rest = buffer.length - (end + 4);
    if (rest > 0) this.onData(buffer.subarray(end + 4));
    else if (this.bodyLeft === 0) this.bodyDone();
  }

  private bodyDone(): void {
    if (!this.dropBody) this.exchange?.bodyEnd();
  }

  /** The response is complete: the next request, or the end of the connection. */
  replied(reply: FrontReply): void {
    if (reply !== this.reply) return;
    this.reply = undefined;
    // A body the exchange stopped taking is still read and dropped; a response that ended before its request body did
    // (an error answered early) leaves the rest to drop too.
    this.dropBody = true;
    this.exchange = undefined;
    if (reply.closesConnection || this.closing) {
      this.socket.end();
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    // A pipelined request already here: parsed on the next turn, not inside the upstream's callback that ended this one.
    if (this.pending !== null) setImmediate(() => !this.busy && this.parse());
  }

  private handOff(): void {
    this.handedOff = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('timeout', this.onTimeout);
    socket.off('error', ignore);
    socket.setTimeout(0);
    socket.pause();
    if (this.pending !== null) socket.unshift(this.pending);
    this.pending = null;
    this.handler.handOff(socket);
    socket.resume();
  }

  /** The client sent its FIN: as node's server (without httpAllowHalfOpen), an exchange under way is aborted and the connection ended. */
  private readonly onEnd = (): void => {
    if (this.reply !== undefined) this.exchange?.clientClosed();
    this.socket.end();
  };

  private readonly onClose = (): void => {
    if (this.reply !== undefined) this.exchange?.clientClosed();
  };

  /**
   * The socket's idle timer (set once: node re-arms it on every read and write, and after it fired): an idle connection
   * or a client stalled mid-request is cut; a response on its way is not (the model may think for minutes, and undici's
   * own timeouts watch the upstream), as node's server times nothing then either.
   */
  private readonly onTimeout = (): void => {
    if (this.busy && this.bodyLeft === 0) return;
    this.socket.destroy();
  };
}

function ignore(): void {}
