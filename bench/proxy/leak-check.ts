/**
 * Leak check for the recording proxy: heap after a forced GC at 5k, 10k and 20k requests through it.
 * A leak shows as growth proportional to the request count. Run: node --expose-gc dist/bench/proxy/leak-check.js
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import { startScriptedModel } from '../../src/sources/scripted-model/server.js';
import { DEFAULT_SCRIPT } from '../../src/sources/scripted-model/default-script.js';

const model = await startScriptedModel({ script: { ...DEFAULT_SCRIPT, max_requests: 1e9 } });
const { proxy, done } = await startProxyPipeline({ upstream: model.url, outDir: mkdtempSync(join(tmpdir(), 'roller-leak-')), wireTrace: 'full' });
const pool = new Pool(proxy.url, { connections: 16 });
const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `[HELLO] ${'x'.repeat(20_000)}` }] });
let sent = 0;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
for (const target of [5000, 10_000, 20_000]) {
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (sent < target) {
        sent++;
        const res = await pool.request({ path: '/v1/messages', method: 'POST', body });
        await res.body.text();
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 500));
  gc();
  gc();
  const m = process.memoryUsage();
  console.log(`${target} requests: heapUsed ${(m.heapUsed / 2 ** 20).toFixed(1)} MB, rss ${(m.rss / 2 ** 20).toFixed(0)} MB`);
}
await pool.close();
await proxy.close();
await done;
await model.close();
