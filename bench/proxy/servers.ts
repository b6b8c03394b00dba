/**
 * The processes of the proxy bench. Each runs alone (its RSS and CPU are its own) and prints its URL on stdout:
 *   upstream  a model API stub: an Anthropic SSE stream (57 events, ~8 KB) for any POST, its events in `chunks` writes
 *             `gapMs` apart (the paced load: a model streaming) or all at once (gapMs 0: the saturation load)
 *   bare      the least a proxy on node's http server can do: node:http + undici, bytes both ways, nothing recorded
 *   roller    roller's recording proxy pipeline as `roller proxy --wire-trace full` runs it (wire log, calls.jsonl,
 *             wire_trace.jsonl, tools_capture.jsonl)
 * The parent sends 'stats' over IPC and gets {rssMb, peakRssMb, cpuMs, children, loopMaxMs} back (children: the same figures for
 * each child process, roller's projection); 'reset-peak' starts a new peak (Linux: /proc/PID/clear_refs); 'exit' ends
 * the process and removes its capture.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import { anthropicEvents } from '../../src/sources/scripted-model/encode-anthropic.js';

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
const EVENTS = [...anthropicEvents(message)];

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A Responses WebSocket that floods: 1 MB event frames, as fast as the socket takes them (bench:proxy-abuse). Framed
 * once and written as bytes, and what the client sends is read and dropped unparsed: a model API's own cost is not
 * the proxy's, and in this one process it would stall the normal load's streams too.
 */
const FLOOD_FRAME = (() => {
  const payload = Buffer.from(JSON.stringify({ type: 'response.output_text.delta', delta: 'x'.repeat(1 << 20) }));
  const head = Buffer.alloc(10);
  head[0] = 0x81; // FIN, text
  head[1] = 127;
  head.writeBigUInt64BE(BigInt(payload.length), 2);
  return Buffer.concat([head, payload]);
})();

function flood(req: IncomingMessage, socket: Duplex): void {
  const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.on('error', () => socket.destroy());
  socket.resume(); // the client's frames, dropped
  const pump = () => {
    while (socket.writable && socket.write(FLOOD_FRAME));
  };
  socket.on('drain', pump);
  pump();
}

async function upstream(gapMs: number, chunks: number): Promise<string> {
  const per = Math.ceil(EVENTS.length / chunks);
  const parts = Array.from({ length: chunks }, (_, i) => Buffer.from(EVENTS.slice(i * per, (i + 1) * per).join('')));
  const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_bench' });
        if (gapMs === 0) return res.end(Buffer.concat(parts));
        let i = 0;
        const next = () => {
          if (i < parts.length - 1) {
            res.write(parts[i++]);
            setTimeout(next, gapMs);
          } else res.end(parts[i]);
        };
        next();
      });
    });
  server.on('upgrade', flood);
  return listen(server);
}

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

/** node:http + undici's dispatch: the request read whole, the response streamed with backpressure, nothing recorded. */
async function bare(target: string): Promise<string> {
  const pool = new Pool(target, { connections: null });
  return listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < req.rawHeaders.length; i += 2) if (!HOP.has(req.rawHeaders[i]!.toLowerCase())) headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
        let resume: () => void = () => {};
        res.on('drain', () => resume());
        pool.dispatch(
          { path: req.url ?? '/', method: 'POST', headers, body: Buffer.concat(parts) },
          {
            onConnect() {},
            onHeaders(status, raw, resumeUpstream) {
              resume = resumeUpstream;
              const out: string[] = [];
              for (let i = 0; i < raw.length; i += 2) if (!HOP.has(raw[i]!.toString('latin1').toLowerCase())) out.push(raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1'));
              res.writeHead(status, out);
              return true;
            },
            onData: (chunk) => res.write(chunk),
            onComplete: () => void res.end(),
            onError: () => void res.destroy(),
          },
        );
      });
    }),
  );
}

let captureDir: string | undefined;

async function roller(target: string): Promise<string> {
  captureDir = mkdtempSync(join(tmpdir(), 'roller-bench-proxy-'));
  if (process.env.BENCH_NO_PROJECTION) return (await (await import('../../src/pipelines/proxy.js')).startRecordingProxy({ upstream: target, outDir: join(captureDir, 'capture') })).url;
  const { proxy } = await startProxyPipeline({ upstream: target, outDir: join(captureDir, 'capture'), wireTrace: (process.env.BENCH_WIRE_TRACE ?? 'full') as 'full', onWireFailure: (e) => process.stderr.write(`${e.message}\n`) });
  return proxy.url;
}

function peakRssMb(pid: number | 'self'): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** This process's children (roller's projection), from /proc; none where /proc has no children lists. */
function childPids(): number[] {
  try {
    return readdirSync('/proc/self/task').flatMap((tid) => readFileSync(`/proc/self/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** A child's CPU (user + system, ms) from /proc/PID/stat: fields 14 and 15, in clock ticks (100 a second here). */
function childCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function resetPeak(pid: number | 'self'): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  } catch {
    // not Linux, or not permitted: the peak is the process's whole life
  }
}

const [kind, target = '', gap = '0', chunks = '1'] = process.argv.slice(2);
const url = kind === 'upstream' ? await upstream(Number(gap), Number(chunks)) : kind === 'bare' ? await bare(target) : await roller(target);
/** How long the event loop was blocked (every request on the process waits that out). */
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
process.on('message', (m) => {
  if (m === 'stats') {
    const u = process.resourceUsage();
    const children = childPids().map((pid) => ({ peakRssMb: peakRssMb(pid), cpuMs: childCpuMs(pid) }));
    process.send!({ rssMb: process.memoryUsage().rss / 2 ** 20, peakRssMb: peakRssMb('self'), cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, children, loopMaxMs: loop.max / 1e6 });
  } else if (m === 'reset-peak') {
    for (const pid of ['self' as const, ...childPids()]) resetPeak(pid);
    loop.reset();
    process.send!({ ok: true });
  } else if (m === 'exit') {
    if (captureDir) rmSync(captureDir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.stdout.write(`${url}\n`);
