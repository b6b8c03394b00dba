/**
 * The processes of the proxy bench. Each runs alone (its RSS is its own) and prints its URL on stdout:
 *   upstream            a model API stub: an Anthropic-like SSE stream or a JSON body, written at once
 *   bare                the limit: node:http + undici pass-through that records nothing
 *   roller-actf/full    roller's recording proxy with calls.jsonl (+ wire_trace in that mode)
 *   http-proxy          the npm http-proxy package with a keep-alive agent; http-proxy-default as its README
 *                       shows it (no agent: a new upstream connection per request)
 * A parent sends 'rss' over IPC and gets {rss, maxRss, cpuMs, faults} back (MB, ms, minor page faults), or 'projected' and gets the
 * number of calls a roller pipeline has written to calls.jsonl so far.
 */
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import httpProxy from 'http-proxy';
import { Pool } from 'undici';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import { startRecordingProxy } from '../../src/sources/proxy/recording-proxy.js';
import { anthropicEvents } from '../../src/sources/scripted-model/encode-anthropic.js';
import { mainThreadCpuMs, schedStats } from './thread-cpu.js';

const message = {
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'bench',
  content: [
    { type: 'thinking', thinking: 'Let me think about this for a moment. '.repeat(8), signature: 'sig_'.padEnd(64, 'x') },
    { type: 'text', text: 'Here is the answer you asked for. '.repeat(20) },
    { type: 'tool_use', id: 'toolu_bench', name: 'Bash', input: { command: 'ls -la src', description: 'List the sources' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 4000, output_tokens: 180 },
};
const SSE = Buffer.from([...anthropicEvents(message)].join(''));
const JSON_BODY = Buffer.from(JSON.stringify(message));

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function drainRequest(req: IncomingMessage, then: () => void): void {
  req.on('data', () => {});
  req.on('end', then);
}

async function upstream(): Promise<string> {
  return listen(
    createServer((req, res) => {
      drainRequest(req, () => {
        const sse = (req.url ?? '').includes('sse');
        res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json', 'request-id': 'req_bench', 'content-length': sse ? SSE.length : JSON_BODY.length });
        res.end(sse ? SSE : JSON_BODY);
      });
    }),
  );
}

/** The least a proxy can do: forward bytes both ways with backpressure, record nothing. */
async function bare(target: string): Promise<string> {
  const pool = new Pool(target, { connections: 256 });
  return listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', async () => {
        try {
          const headers = { ...req.headers };
          delete headers.host;
          delete headers.connection;
          const up = await pool.request({ path: req.url ?? '/', method: 'POST', headers, body: Buffer.concat(parts) });
          const out = { ...up.headers };
          delete out.connection;
          delete out['keep-alive'];
          delete out['transfer-encoding'];
          res.writeHead(up.statusCode, out as Record<string, string>);
          for await (const chunk of up.body) if (!res.write(chunk)) await once(res, 'drain');
          res.end();
        } catch {
          res.destroy();
        }
      });
    }),
  );
}

/**
 * The same least proxy on undici's handler API (`dispatch`): no response stream object, no promise, raw
 * header arrays both ways — a stricter limit than `bare`, printed beside it.
 */
async function bareDispatch(target: string, burnUs = 0): Promise<string> {
  const pool = new Pool(target, { connections: 256 });
  const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);
  return listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const raw = req.rawHeaders;
        const headers: string[] = [];
        for (let i = 0; i < raw.length; i += 2) if (!HOP.has(raw[i]!.toLowerCase())) headers.push(raw[i]!, raw[i + 1]!);
        let resume: () => void = () => {};
        res.on('drain', () => resume());
        pool.dispatch(
          { path: req.url ?? '/', method: 'POST', headers, body: parts.length === 1 ? parts[0]! : Buffer.concat(parts) },
          {
            onConnect() {},
            onHeaders(status, rawHeaders, resumeUpstream) {
              resume = resumeUpstream;
              const out: string[] = [];
              for (let i = 0; i < rawHeaders.length; i += 2) {
                const name = rawHeaders[i]!.toString('latin1');
                if (!HOP.has(name.toLowerCase())) out.push(name, rawHeaders[i + 1]!.toString('latin1'));
              }
              res.writeHead(status, out);
              return true;
            },
            onData(chunk) {
              return res.write(chunk);
            },
            onComplete() {
              res.end();
              // `bare-dispatch+Nus`: N more microseconds of CPU per request, on the forwarding thread, after the response
              // is handed off — a calibration of how far a point's req/s moves with a proxy's CPU.
              if (burnUs > 0) for (const until = performance.now() + burnUs / 1000; performance.now() < until; );
            },
            onError() {
              res.destroy();
            },
          },
        );
      });
    }),
  );
}

/**
 * The npm http-proxy package. `keepAlive`: with a keep-alive agent (the strongest form, printed as
 * http-proxy). Without: as its README shows it, `createProxyServer({ target })` — no agent, so a new upstream
 * connection per request with `connection: close` (printed as http-proxy-default; the kit measured
 * http-proxy at 0.40 x direct, which is this form, not the first).
 */
async function viaHttpProxy(target: string, keepAlive: boolean): Promise<string> {
  const proxy = httpProxy.createProxyServer(keepAlive ? { target, agent: new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 256 }) } : { target });
  proxy.on('error', (_err, _req, res) => (res as ServerResponse).destroy());
  return listen(createServer((req, res) => proxy.web(req, res)));
}

/** The capture directory of a roller target, to count projected calls in. */
let captureDir: string | undefined;
/** The wire log of the request-path-only target (no calls.jsonl to count). */
let wireOnlyDir: string | undefined;

async function roller(target: string, mode: 'actf' | 'full'): Promise<string> {
  captureDir = mkdtempSync(join(tmpdir(), `roller-bench-proxy-${mode}-`));
  const { proxy } = await startProxyPipeline({ upstream: target, outDir: captureDir, wireTrace: mode });
  return proxy.url;
}

/**
 * Lines of calls.jsonl so far: how many calls the projection has written (-1: not a roller pipeline).
 * Counted incrementally — re-reading a growing file every poll would cost more than what it measures.
 */
let counted = { offset: 0, lines: 0 };
const scratch = Buffer.allocUnsafe(1 << 20);
function projectedCalls(): number {
  if (!captureDir) return -1;
  const fd = openSync(join(captureDir, 'calls.jsonl'), 'r');
  try {
    for (;;) {
      const n = readSync(fd, scratch, 0, scratch.length, counted.offset);
      if (n === 0) break;
      for (let i = scratch.indexOf(10); i !== -1 && i < n; i = scratch.indexOf(10, i + 1)) counted.lines++;
      counted = { offset: counted.offset + n, lines: counted.lines };
    }
  } finally {
    closeSync(fd);
  }
  return counted.lines;
}

const [kind, target] = process.argv.slice(2);
const start: Record<string, () => Promise<string>> = {
  upstream,
  bare: () => bare(target!),
  'bare-dispatch': () => bareDispatch(target!),
  'http-proxy': () => viaHttpProxy(target!, true),
  'http-proxy-default': () => viaHttpProxy(target!, false),
  'roller-actf': () => roller(target!, 'actf'),
  'roller-full': () => roller(target!, 'full'),
  'roller-inline': async () => {
    captureDir = mkdtempSync(join(tmpdir(), 'roller-bench-proxy-inline-'));
    return (await startProxyPipeline({ upstream: target!, outDir: captureDir, wireTrace: 'full', projection: 'inline' })).proxy.url;
  },
  // The request path alone: the wire log written, nothing projected (what forwarding + recording costs).
  'roller-wire-only': async () => {
    wireOnlyDir = mkdtempSync(join(tmpdir(), 'roller-bench-proxy-wire-'));
    return (await startRecordingProxy({ upstream: target!, outDir: wireOnlyDir })).url;
  },
};
const burn = /^bare-dispatch\+(\d+)us$/.exec(kind!);
const url = burn ? await bareDispatch(target!, Number(burn[1])) : await start[kind!]!();
process.on('message', (m) => {
  if (m === 'projected') process.send!({ projected: projectedCalls() });
  if (m === 'rss') {
    const u = process.resourceUsage();
    process.send!({ rss: process.memoryUsage().rss / 2 ** 20, maxRss: u.maxRSS / 1024, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, mainCpuMs: mainThreadCpuMs(), faults: u.minorPageFault, sched: schedStats() });
  }
  if (m === 'exit') {
    // A normal exit, so --cpu-prof can write its profile; the capture (hundreds of MB) goes with it.
    for (const dir of [captureDir, wireOnlyDir]) if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.stdout.write(`${url}\n`);
