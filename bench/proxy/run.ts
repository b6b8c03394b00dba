/**
 * Proxy benchmark (issue 30): roller against a direct connection and a bare node:http + undici pass-through, at the
 * load agents make and at saturation. Each server runs in its own process (servers.ts); the client is this process;
 * all share the machine's cores. Prints:
 *   paced       50 requests/s of SSE over 1 and 64 agent sessions (each a conversation growing by a turn per request,
 *               ~20 KB bodies; the upstream streams each response over ~250 ms): p50/p99 time to first byte, added over
 *               direct and over bare, proxy CPU per request, proxy peak RSS
 *   flood       8 clients each sending a 60 MB body at once (retrying a 503 after 250 ms; bodies past 4 MB are streamed):
 *               peak RSS, what was answered
 *   saturation  requests/s with responses sent at once, 16 and 64 sessions, closed loop: roller / bare
 *
 *   npm run bench:proxy
 *   npm run bench:proxy -- --paced-requests 2000 --saturation-requests 6000
 */
import { Pool } from 'undici';
import { children, measured, start, type Server } from './processes.js';
import { sessionBodies, TURNS } from './session-bodies.js';

const SESSIONS = Array.from({ length: 64 }, (_, s) => sessionBodies(s));
const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-bench-dummy' };

/** One session's request: its next turn, with the session header Claude Code sends. Resolves to the TTFB (ms). */
async function turn(pool: Pool, session: number, k: number): Promise<number> {
  const t0 = performance.now();
  const res = await pool.request({ path: '/v1/messages', method: 'POST', headers: { ...HEADERS, 'x-claude-code-session-id': `bench-${session}-${Math.floor(k / TURNS)}` }, body: SESSIONS[session]![k % TURNS]! });
  let ttfb = -1;
  for await (const _ of res.body) if (ttfb < 0) ttfb = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
  return ttfb;
}

/** Requests due at `rate` per second, request k to session k % sessions (a session waits for its previous answer). */
async function paced(url: string, sessions: number, rate: number, requests: number): Promise<number[]> {
  const pool = new Pool(url, { connections: sessions });
  const ttfbs: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let k = s, n = 0; k < requests; k += sessions, n++) {
        const due = t0 + (k * 1000) / rate - performance.now();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
        ttfbs.push(await turn(pool, s, n));
      }
    }),
  );
  await pool.close();
  return ttfbs;
}

/** As fast as it goes: `sessions` closed loops. Requests per second. */
async function saturate(url: string, sessions: number, requests: number): Promise<number> {
  const pool = new Pool(url, { connections: sessions });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let n = 0; next < requests; n++) {
        next++;
        await turn(pool, s, n);
      }
    }),
  );
  const rps = requests / ((performance.now() - t0) / 1000);
  await pool.close();
  return rps;
}

/** 8 clients, each one 60 MB body at once; a 503 (roller's budget) is retried after 250 ms. */
async function flood(url: string): Promise<{ statuses: Record<string, number>; seconds: number }> {
  const body = Buffer.alloc(60 << 20, 0x61);
  body.write('{"model":"bench","messages":[{"role":"user","content":"');
  body.write('"}]}', body.length - 4);
  const statuses: Record<string, number> = {};
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      const pool = new Pool(url, { connections: 1 });
      for (let attempt = 0; attempt < 400; attempt++) {
        const res = await pool.request({ path: '/v1/messages', method: 'POST', headers: HEADERS, body });
        await res.body.text();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode !== 503) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      await pool.close();
    }),
  );
  return { statuses, seconds: (performance.now() - t0) / 1000 };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const f = (x: number | null, digits = 2) => (x === null || Number.isNaN(x) ? '-' : x.toFixed(digits));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

async function main(): Promise<void> {
  const pacedRequests = arg('--paced-requests', 1000);
  const only = (process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]! : 'paced,flood,saturation').split(',');
  const saturationRequests = arg('--saturation-requests', 4000);
  const verdicts: string[] = [];

  // ---- paced: what agents do ------------------------------------------------------------------------------
  if (only.includes('paced')) await pacedPart(pacedRequests, verdicts);
  const instant = await start('upstream', ['', '0', '1']);
  if (only.includes('flood')) await floodPart(instant, verdicts);
  if (only.includes('saturation')) await saturationPart(instant, saturationRequests, verdicts);
  console.log(`\n${verdicts.join('\n')}`);
}

async function pacedPart(pacedRequests: number, verdicts: string[]): Promise<void> {
  const streaming = await start('upstream', ['', '25', '10']);
  const paceTargets: Server[] = [{ name: 'direct', url: streaming.url }, await start('bare', [streaming.url]), await start('roller', [streaming.url])];
  console.log('paced: 50 req/s of SSE (each response streamed over ~250 ms)');
  console.log('  sessions  target   requests  ttfb p50 ms  p99 ms  added p50/p99 vs direct  vs bare    CPU us/req  peak RSS MB  projection: CPU us/req  peak RSS MB');
  const p50: Record<string, number> = {};
  const p99: Record<string, number> = {};
  const rss: Record<string, number[]> = { bare: [], roller: [] };
  for (const sessions of [1, 64]) {
    const requests = sessions === 1 ? 40 : pacedRequests;
    for (const t of paceTargets) await paced(t.url, sessions, 50, Math.min(64, requests)); // warm-up
    for (const t of paceTargets) {
      const { result, cpuMs, peakRssMb, projection } = await measured(t, () => paced(t.url, sessions, 50, requests));
      const key = `${t.name}@${sessions}`;
      p50[key] = pct(result, 50);
      p99[key] = pct(result, 99);
      if (peakRssMb !== null) rss[t.name]!.push(peakRssMb);
      const added = (base: string) => (t.name === base ? '' : `${f(p50[key]! - p50[`${base}@${sessions}`]!)} / ${f(p99[key]! - p99[`${base}@${sessions}`]!)}`);
      console.log(`  ${String(sessions).padStart(8)}  ${t.name.padEnd(7)}  ${String(requests).padStart(8)}  ${f(p50[key]!).padStart(11)}  ${f(p99[key]!).padStart(6)}  ${added('direct').padStart(23)}  ${(t.name === 'roller' ? added('bare') : '').padStart(11)}  ${f(cpuMs === null ? null : (cpuMs * 1000) / requests, 0).padStart(10)}  ${f(peakRssMb, 0).padStart(11)}  ${projection ? `${f((projection.cpuMs * 1000) / requests, 0).padStart(22)}  ${f(projection.peakRssMb, 0).padStart(11)}` : ''}`);
    }
  }
  const addedP50 = p50['roller@64']! - p50['direct@64']!;
  const addedP99 = p99['roller@64']! - p99['direct@64']!;
  verdicts.push(`added TTFB at 64 sessions over direct: p50 ${f(addedP50)} ms (target <= 1) ${addedP50 <= 1 ? 'PASS' : 'MISS'}, p99 ${f(addedP99)} ms (target <= 5) ${addedP99 <= 5 ? 'PASS' : 'MISS'}`);
  verdicts.push(`roller peak RSS at 1 and 64 sessions: ${rss.roller!.map((x) => f(x, 0)).join(' / ')} MB (target <= 200, flat) ${Math.max(...rss.roller!) <= 200 ? 'PASS' : 'MISS'}`);
}

async function floodPart(instant: Server, verdicts: string[]): Promise<void> {
  console.log('\nflood: 8 clients, one 60 MB body each, at once (a 503 retried after 250 ms)');
  for (const name of ['bare', 'roller']) {
    const t = await start(name, [instant.url]);
    const { result, peakRssMb, projection } = await measured(t, () => flood(t.url));
    const projected = projection ? `   projection's peak RSS ${f(projection.peakRssMb, 0)} MB` : '';
    console.log(`  ${name.padEnd(7)} peak RSS ${f(peakRssMb, 0).padStart(5)} MB   answers ${JSON.stringify(result.statuses)}   ${f(result.seconds, 1)} s${projected}`);
    if (name === 'roller') verdicts.push(`roller peak RSS under the 60 MB-body flood: ${f(peakRssMb, 0)} MB (target <= 200) ${peakRssMb! <= 200 ? 'PASS' : 'MISS'}`);
    t.child!.send('exit');
  }
}

async function saturationPart(instant: Server, saturationRequests: number, verdicts: string[]): Promise<void> {
  const satTargets = [await start('bare', [instant.url]), await start('roller', [instant.url])];
  console.log('\nsaturation: SSE answered at once, closed loop');
  for (const sessions of [16, 64]) {
    const rps: Record<string, number> = {};
    for (const t of satTargets) await saturate(t.url, sessions, 300); // warm-up
    for (const t of satTargets) {
      const { result, cpuMs, projection } = await measured(t, () => saturate(t.url, sessions, saturationRequests));
      rps[t.name] = result;
      const projected = projection ? `   projection CPU ${f((projection.cpuMs * 1000) / saturationRequests, 0)} us/req` : '';
      console.log(`  ${String(sessions).padStart(3)} sessions  ${t.name.padEnd(7)} ${f(result, 0).padStart(6)} req/s   CPU ${f((cpuMs! * 1000) / saturationRequests, 0)} us/req${projected}`);
    }
    verdicts.push(`saturation at ${sessions} sessions, roller / bare: ${f(rps.roller! / rps.bare!)} (>= 0.7 expected, not a gate)`);
  }
}

try {
  await main();
} finally {
  for (const c of children) if (c.connected) c.send('exit');
}
