/**
 * The proxy under abuse (issue 47 §6): a normal client (one agent session, 20 requests/s of streamed SSE) runs beside
 * each abuse in turn, against roller's proxy pipeline in its own process. Prints, per abuse, the normal requests' p99
 * time to first byte against the same load with no abuse, the proxy's peak RSS (VmHWM, reset before each part), and
 * the longest its event loop was blocked (what every exchange on the proxy waited out at once).
 * Targets: peak RSS <= 256 MB, normal p99 <= idle p99 + 50 ms.
 *
 *   npm run bench:proxy-abuse
 *   npm run bench:proxy-abuse -- --seconds 20 --only tricklers,websockets
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { WebSocket } from 'ws';
import { children, measured, start, type Server } from './processes.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('--seconds', 10);
const BODY = JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'x'.repeat(20_000) }] });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The normal client: 20 requests/s for `seconds`, each TTFB in ms. */
async function normalLoad(url: string, seconds: number): Promise<number[]> {
  const pool = new Pool(url, { connections: 1 });
  const ttfbs: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await pool.request({ path: '/v1/messages', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
    let ttfb = -1;
    for await (const _ of res.body) if (ttfb < 0) ttfb = performance.now() - t0;
    ttfbs.push(ttfb);
    const wait = 50 - (performance.now() - t0);
    if (wait > 0) await sleep(wait);
  }
  await pool.close();
  return ttfbs;
}

function raw(url: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => resolve(s));
    s.on('error', reject);
  });
}

/** Each abuse runs until `stop` resolves, and cleans up after itself. */
type Abuse = (url: string, stop: Promise<void>) => Promise<string>;

const ABUSES: Record<string, Abuse> = {
  /** 300 connections declare 4 MB bodies and send a byte every 100 ms. */
  async tricklers(url, stop) {
    const sockets = await Promise.all(Array.from({ length: 300 }, () => raw(url)));
    for (const s of sockets) {
      s.on('error', () => {});
      s.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: ${4 << 20}\r\n\r\n{"a":"`);
    }
    const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write('1')), 100);
    await stop;
    clearInterval(drip);
    sockets.forEach((s) => s.destroy());
    return '300 connections';
  },
  /** Clients that send a whole request and hang up at once, 50 a second. */
  async hangups(url, stop) {
    let n = 0;
    let over = false;
    void stop.then(() => (over = true));
    while (!over) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => raw(url)));
      for (const s of batch) {
        s.on('error', () => {});
        s.end(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`);
        n++;
      }
      await sleep(200);
    }
    return `${n} hang-ups`;
  },
  /** 300 connections send their request head one header a second. */
  async slowHeads(url, stop) {
    const sockets = await Promise.all(Array.from({ length: 300 }, () => raw(url)));
    for (const s of sockets) {
      s.on('error', () => {});
      s.write('POST /v1/messages HTTP/1.1\r\nhost: x\r\n');
    }
    const drip = setInterval(() => sockets.forEach((s, i) => s.writable && s.write(`x-slow-${i}: 1\r\n`)), 1000);
    await stop;
    clearInterval(drip);
    sockets.forEach((s) => s.destroy());
    return '300 connections';
  },
  /** Request bodies of 1 MB gzip that inflate to 1 GiB, one every 500 ms (the projection decodes at most 256 MB). */
  async gzipBombs(url, stop) {
    const bomb = gzipSync(Buffer.alloc(1 << 30, 0x20), { level: 9 });
    const pool = new Pool(url, { connections: 4 });
    let n = 0;
    let over = false;
    void stop.then(() => (over = true));
    while (!over) {
      const res = await pool.request({ path: '/v1/messages', method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb }).catch(() => null);
      await res?.body.text();
      n++;
      await sleep(500);
    }
    await pool.close();
    return `${n} bombs of ${(bomb.length / 2 ** 20).toFixed(1)} MB`;
  },
  /**
   * Four WebSocket clients that read nothing while the upstream floods them with 1 MB events, and one that sends a
   * 30 MB message (the relay's limit is 32) every second: bounded by backpressure, not by the flood.
   */
  async websockets(url, stop) {
    const wsUrl = `${url.replace('http', 'ws')}/v1/responses`;
    const readers = await Promise.all(
      Array.from({ length: process.env.BENCH_WS === 'sender' ? 0 : 4 }, async () => {
        const ws = new WebSocket(wsUrl);
        ws.on('error', () => {});
        await once(ws, 'open');
        ws.pause();
        return ws;
      }),
    );
    const sender = new WebSocket(wsUrl);
    sender.on('error', () => {});
    await once(sender, 'open');
    const big = Buffer.alloc(30 << 20, 0x61);
    let sent = 0;
    const timer = setInterval(() => {
      if (process.env.BENCH_WS !== 'readers' && sender.readyState === WebSocket.OPEN && sender.bufferedAmount === 0) {
        sender.send(big);
        sent++;
      }
    }, 1000);
    await stop;
    clearInterval(timer);
    for (const ws of [...readers, sender]) ws.terminate();
    return `4 clients not reading a flood, ${sent} messages of 30 MB`;
  },
  /** Eight 60 MB bodies at once, again and again (the flood of bench:proxy, sustained). */
  async largeBodies(url, stop) {
    const body = Buffer.alloc(60 << 20, 0x61);
    let n = 0;
    let over = false;
    void stop.then(() => (over = true));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const pool = new Pool(url, { connections: 1 });
        while (!over) {
          const res = await pool.request({ path: '/v1/messages', method: 'POST', body }).catch(() => null);
          await res?.body.text();
          n++;
        }
        await pool.close();
      }),
    );
    return `${n} bodies of 60 MB`;
  },
};

/**
 * Runs one abuse in its own process (this script with --abuser): its own work — framing and masking 30 MB messages,
 * 300 sockets — must not slow the normal client that measures the proxy.
 */
async function abuseInChild(name: string, url: string): Promise<{ stop(): Promise<string> }> {
  const child = fork(fileURLToPath(import.meta.url), ['--abuser', name, url], { stdio: 'inherit' });
  children.push(child);
  await once(child, 'message'); // under way
  return {
    async stop() {
      child.send('stop');
      const [note] = (await once(child, 'message')) as [string];
      return note;
    },
  };
}

async function part(roller: Server, name: string, abuse: boolean): Promise<{ p99: number; peakRssMb: number; loopMaxMs: number; note: string }> {
  const { result, peakRssMb, loopMaxMs } = await measured(roller, async () => {
    const running = abuse ? await abuseInChild(name, roller.url) : null;
    await sleep(abuse ? 1000 : 0); // the abuse under way before the normal client starts
    const ttfbs = await normalLoad(roller.url, SECONDS);
    return { ttfbs, note: running ? await running.stop() : '-' };
  });
  return { p99: pct(result.ttfbs, 99), peakRssMb: peakRssMb!, loopMaxMs: loopMaxMs!, note: `${name}: ${result.note}, ${result.ttfbs.length} normal requests` };
}

async function main(): Promise<void> {
  const upstream = await start('upstream', ['', '25', '10']);
  const roller = await start('roller', [upstream.url]);
  await normalLoad(roller.url, 2); // warm-up
  const idle = await part(roller, 'idle', false);
  console.log(`proxy under abuse: a normal session at 20 req/s for ${SECONDS} s beside each abuse`);
  console.log('  abuse          normal p99 ms  over idle ms  peak RSS MB  loop max ms  verdict');
  console.log(`  ${'(none)'.padEnd(13)}  ${idle.p99.toFixed(1).padStart(13)}  ${''.padStart(12)}  ${idle.peakRssMb.toFixed(0).padStart(11)}  ${idle.loopMaxMs.toFixed(0).padStart(11)}`);
  const notes: string[] = [];
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]!.split(',') : null;
  for (const name of Object.keys(ABUSES)) {
    if (only && !only.includes(name)) continue;
    const r = await part(roller, name, true);
    const over = r.p99 - idle.p99;
    const ok = r.peakRssMb <= 256 && over <= 50;
    console.log(`  ${name.padEnd(13)}  ${r.p99.toFixed(1).padStart(13)}  ${over.toFixed(1).padStart(12)}  ${r.peakRssMb.toFixed(0).padStart(11)}  ${r.loopMaxMs.toFixed(0).padStart(11)}  ${ok ? 'PASS' : 'MISS'} (RSS <= 256, p99 <= idle + 50)`);
    notes.push(r.note);
  }
  console.log(`\n${notes.join('\n')}`);
}

if (process.argv[2] === '--abuser') {
  // A child: runs one abuse until the parent says stop, then reports what it did.
  const stop = new Promise<void>((resolve) => process.once('message', () => resolve()));
  const running = ABUSES[process.argv[3]!]!(process.argv[4]!, stop);
  process.send!('started');
  process.send!(await running);
  process.exit(0);
}
try {
  await main();
} finally {
  for (const c of children) if (c.connected) c.send('exit');
}
