import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6, type AddressInfo } from 'node:net';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { answer } from './api.js';
import { viewAssets } from './assets.js';
import type { ViewData } from './view-data.js';

const TYPES: Record<string, string> = { 'index.html': 'text/html; charset=utf-8', 'style.css': 'text/css; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8' };

// The page loads nothing from elsewhere, and a value in a run's files can never become markup or a request.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface ViewServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A loopback name or address, however written (127.1, ::ffff:127.0.0.1, [::1], localhost). */
export function isLoopbackHost(name: string): boolean {
  if (name.toLowerCase() === 'localhost') return true;
  let hostname: string;
  try {
    hostname = new URL(`http://${isIPv6(name.replace(/^\[|\]$/g, '')) ? `[${name.replace(/^\[|\]$/g, '')}]` : name}/`).hostname;
  } catch {
    return false;
  }
  if (isIPv4(hostname)) return hostname.startsWith('127.');
  const v6 = hostname.replace(/^\[|\]$/g, '');
  // ::1, or an IPv4-mapped 127.x.y.z (WHATWG writes it as ::ffff:7fXX:XXXX).
  return v6 === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(v6);
}

const TOKEN_COOKIE = 'roller_view_token';

/**
 * `roller view`'s server (node's http): the page's three files and the JSON API over a run's files, read-only.
 * On loopback a request must name a loopback host (a page elsewhere cannot reach it by DNS rebinding); on any other
 * bind every request carries the view's token (in the URL it prints, then a same-site cookie): a page elsewhere, or a
 * neighbour on the network, that does not know it reads nothing.
 */
export async function startViewServer(data: ViewData, options: { host?: string; port?: number } = {}): Promise<ViewServer> {
  const host = options.host ?? '127.0.0.1';
  const assets = await viewAssets('server');
  void data.table.index(); // the run table's sample columns fill in while the first page is read
  const loopback = isLoopbackHost(host);
  const token = loopback ? null : randomBytes(24).toString('base64url');
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 500, { error: { code: 'INTERNAL', message: (err as Error).message } }));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const hostHeader = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (loopback && !isLoopbackHost(hostHeader)) return send(res, 403, { error: { code: 'HOST_REFUSED', message: `Host ${req.headers.host ?? '(none)'} is not this machine: open the view at its loopback address` } });
    const url = new URL(req.url ?? '/', 'http://view');
    const extra: Record<string, string> = {};
    if (token !== null) {
      const given = url.searchParams.get('token') ?? cookieOf(req, TOKEN_COOKIE);
      if (given === null || !sameSecret(given, token)) return send(res, 403, { error: { code: 'TOKEN_REFUSED', message: 'this view is served beyond loopback: open it at the URL roller view printed (it carries the token)' } });
      if (url.searchParams.has('token')) extra['set-cookie'] = `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: { code: 'METHOD', message: 'the view is read-only: GET only' } });
    const file = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
    if (file in TYPES) {
      res.writeHead(200, { 'content-type': TYPES[file]!, ...SECURITY_HEADERS, ...extra });
      res.end(req.method === 'HEAD' ? undefined : assets[file as keyof typeof assets]);
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      try {
        return send(res, 200, await answer(data, url.pathname.slice('/api/'.length), url.searchParams));
      } catch (err) {
        if (err instanceof RollerError) return send(res, err.code === ErrorCode.FILE_NOT_FOUND ? 404 : 400, { error: { code: err.code, message: err.message } });
        throw err;
      }
    }
    send(res, 404, { error: { code: 'FILE_NOT_FOUND', message: `nothing at ${url.pathname}` } });
  }
  server.listen(options.port ?? 0, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' || err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL'
          ? new RollerError(ErrorCode.PORT_UNAVAILABLE, `cannot serve on ${host}:${options.port ?? 0} (${err.code}): pass another --port, or none for any free one${err.code === 'EADDRNOTAVAIL' ? ', and a --host this machine has' : ''}`)
          : err,
      ),
    );
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/${token !== null ? `?token=${token}` : ''}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}
