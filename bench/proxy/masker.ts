/**
 * The secret masker's throughput on what the proxy masks: an Anthropic SSE answer in its chunks (the stream path) and a
 * 32 MB WebSocket message whole (maskBytes), with a key and a stand-in known. The limit, measured in the same run: one
 * Buffer.indexOf pass of the raw key over the same bytes (what an exact-match masker costs at least).
 *
 *   npm run bench:masker
 */
import { SecretMasker } from '../../src/core/secret-masker.js';

const key = `fixture-key-v1-${'Zq8v2LmN4pRt6XyB'.repeat(6)}`; // key-shaped, made at run time
const masker = new SecretMasker([key, 'roller-stand-in-0123456789abcdef0123']);
const event = (i: number) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Some words of an answer, number ${i}, a path /usr/lib/x_y-z.js and 50% more"}}\n\n`;
const chunks = Array.from({ length: 40_000 }, (_, i) => Buffer.from(event(i)));
const whole = Buffer.concat(chunks);
const big = Buffer.concat(Array.from({ length: Math.ceil((32 << 20) / whole.length) }, () => whole));

function best(runs: number, f: () => void): number {
  let min = Infinity;
  for (let r = 0; r < runs; r++) {
    const t = process.hrtime.bigint();
    f();
    min = Math.min(min, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return min;
}

const needle = Buffer.from(key);
const limitStream = best(5, () => chunks.forEach((c) => c.indexOf(needle)));
const stream = best(5, () => {
  const s = masker.stream();
  for (const c of chunks) s.push(c);
  s.end();
});
const limitWhole = best(5, () => big.indexOf(needle));
const wholeMs = best(5, () => masker.maskBytes(big));
const mbps = (bytes: number, ms: number) => ((bytes / 1e6) / (ms / 1000)).toFixed(0);
console.log('path            bytes MB  masker MB/s  limit MB/s  ratio');
console.log(`stream (SSE)    ${(whole.length / 1e6).toFixed(1).padStart(8)}  ${mbps(whole.length, stream).padStart(11)}  ${mbps(whole.length, limitStream).padStart(10)}  ${(stream / limitStream).toFixed(1).padStart(5)}`);
console.log(`whole message   ${(big.length / 1e6).toFixed(1).padStart(8)}  ${mbps(big.length, wholeMs).padStart(11)}  ${mbps(big.length, limitWhole).padStart(10)}  ${(wholeMs / limitWhole).toFixed(1).padStart(5)}`);
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
