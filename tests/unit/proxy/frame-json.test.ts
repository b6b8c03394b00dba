import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { util as undiciUtil } from 'undici';
import { describe, expect, it } from 'vitest';
import { jsonText, writeResponseHeadMeta, type RecordedResponseHead } from '../../../src/sources/proxy/frame-json.js';
import { splitResponseHead } from '../../../src/sources/proxy/headers.js';
import { WireLogWriter, type EndMeta, type RequestMeta } from '../../../src/sources/proxy/wire-log.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('frame-json');
let logs = 0;

/** Frames appended by `write` to a fresh log, as their header lines' text (what the writer spelled). */
async function headerLines(write: (w: WireLogWriter) => void): Promise<string[]> {
  const w = await WireLogWriter.open(join(tmp.path, `log-${logs++}`, 'wire.frames'));
  write(w);
  await w.close();
  const log = await readFile(w.path);
  const lines: string[] = [];
  for (let at = 0; at < log.length; ) {
    const nl = log.indexOf(10, at);
    const line = log.toString('utf8', at, nl);
    lines.push(line);
    at = nl + 1 + (JSON.parse(line) as { n: number }).n + 1;
  }
  return lines;
}

/** The header line a frame with this meta must have: its meta exactly as JSON.stringify spells it. */
const expectedLine = (c: string, k: string, n: number, meta: unknown) => `{"c":"${c}","k":"${k}","n":${n},"m":${JSON.stringify(meta)}}`;

/** Strings that exercise every escape JSON has: quotes, backslashes, controls, non-ASCII, lone surrogates. */
const AWKWARD = ['', 'plain', 'with "quotes"', 'back\\slash', 'tab\there', 'nl\nx', '\u0000\u001f\u007f', 'ünïcødé ✓', '\ud83d\ude00', 'lone \ud800 surrogate', '</script>', "'single'"];

/** A small deterministic generator (the same cases every run). */
function* cases(n: number): Generator<number> {
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    yield x >>> 0;
  }
}

describe('frame meta JSON (the request path builds it without JSON.stringify)', () => {
  it('a string is what JSON.stringify gives, escapes included', async () => {
    const lines = await headerLines((w) => {
      for (const [i, s] of AWKWARD.entries()) w.appendEnd(`c-${i}`, { first_byte_at: null, ended_at: 1, upstream_ended: false, client_aborted: false, upstream_error: s, errors: [] });
    });
    expect(lines.map((l) => (JSON.parse(l) as { m: EndMeta }).m.upstream_error)).toEqual(AWKWARD);
    for (const [i, s] of AWKWARD.entries()) expect(lines[i]).toContain(`"upstream_error":${JSON.stringify(s)},`);
  });

  it('a request meta is byte for byte JSON.stringify(meta), in the meta\'s own key order, for the proxy\'s metas and odd ones', async () => {
    const metas: RequestMeta[] = [];
    let i = 0;
    for (const r of cases(300)) {
      const pick = <T>(xs: readonly T[], shift: number): T => xs[(r >>> shift) % xs.length]!;
      const meta: RequestMeta = {
        seq: i++,
        transport: r & 1 ? 'http' : 'websocket',
        protocol: pick(['anthropic-messages', 'openai-chat-completions', 'openai-responses', 'other'] as const, 1),
        method: pick(['POST', 'GET', 'PUT'], 3),
        path: pick(['/v1/messages?beta=true', '/v1/responses', ...AWKWARD], 5),
        upstream_path: pick(['/proxy/v1/messages', '/v1/chat/completions', ...AWKWARD], 9),
        started_at: 1_764_000_000_000 + r,
        identity: r & 2 ? { session_id: pick(AWKWARD, 13), agent_id: 'a-1' } : r & 4 ? {} : { run_id: 'run', thread_id: pick(AWKWARD, 17) },
        dropped: r & 8 ? [] : ['x-roller-run-id', pick(AWKWARD, 19)],
      };
      if (r & 16) meta.content_encoding = pick(['gzip', 'zstd', 'br'], 21);
      if (r & 32) meta.body_omitted = pick(['too large', ...AWKWARD], 23);
      if (r & 64) meta.delta = { base: `c-abcd-${String(r % 1000).padStart(6, '0')}`, prefix: r % 50_000, suffix: r % 700 };
      if (r & 128) meta.body_ref = { file: 'calls.jsonl', call_id: 'c-x-000001', pointer: '/context', wire_content_encoding: 'gzip' };
      metas.push(meta);
    }
    const lines = await headerLines((w) => metas.forEach((m, j) => w.appendRequest(`c-q-${j}`, m)));
    expect(lines).toEqual(metas.map((m, j) => expectedLine(`c-q-${j}`, 'q', 0, m)));
  });

  it('fields it does not know, and values JSON.stringify leaves out, come out as JSON.stringify has them', async () => {
    // A meta read back from another version's log and republished (wire-publish) can carry anything.
    const odd = {
      extra: { nested: [1, 'two', null] },
      seq: 1.5,
      started_at: Number.NaN,
      path: undefined,
      fn: () => 1,
      identity: { session_id: 's', n: 3, gone: undefined },
      dropped: ['a', 1],
      delta: { base: 'b', prefix: 1, suffix: 2, more: true },
      flag: false,
    } as unknown as RequestMeta;
    expect(await headerLines((w) => w.appendRequest('c-odd', odd))).toEqual([expectedLine('c-odd', 'q', 0, odd)]);
    // A delta with the proxy's three fields in another order is spelled in its own order, as JSON.stringify does.
    const reordered = { seq: 1, identity: {}, dropped: [], delta: { suffix: 2, base: 'b', prefix: 1 } } as unknown as RequestMeta;
    expect(await headerLines((w) => w.appendRequest('c-reordered', reordered))).toEqual([expectedLine('c-reordered', 'q', 0, reordered)]);
  });

  it('an end meta is JSON.stringify(end)', async () => {
    const ends: EndMeta[] = [
      { first_byte_at: null, ended_at: 1, upstream_ended: false, client_aborted: true, upstream_error: null, errors: [] },
      { first_byte_at: 1_764_000_000_123, ended_at: 1_764_000_000_456, upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] },
      ...AWKWARD.map((s) => ({ first_byte_at: 5, ended_at: 6, upstream_ended: false, client_aborted: false, upstream_error: s, errors: [{ code: 'UPSTREAM_FAILED', message: s }] })),
    ];
    const lines = await headerLines((w) => ends.forEach((e, j) => w.appendEnd(`c-x-${j}`, e)));
    expect(lines).toEqual(ends.map((e, j) => expectedLine(`c-x-${j}`, 'x', 0, e)));
  });

  it('numbers are spelled as JSON.stringify spells them: digit-by-digit integers at every width, and everything else', async () => {
    // The writer spells safe integers itself (int32 digits; bigger ones as two halves, the low one zero-padded).
    const numbers = [0, -0, 1, 9, 10, 99, 100, 123_456_789, 999_999_999, 1e9, 1e9 + 1, 1_000_000_007, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 4_294_967_296_123, 1_764_000_000_000, 1_764_612_345_678, 9_999_999_999_999, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e21, -1, -1_764_000_000_000, 0.5, 1.25e-7, 1_764_000_000_000.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    const ends = numbers.map((n): EndMeta => ({ first_byte_at: n, ended_at: n, upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] }));
    const requests = numbers.map((n): RequestMeta => ({ seq: n, transport: 'http', protocol: 'other', method: 'POST', path: '/', upstream_path: '/', started_at: n, identity: {}, dropped: [], delta: { base: 'c-b', prefix: n, suffix: n } }));
    const lines = await headerLines((w) => {
      ends.forEach((e, j) => w.appendEnd(`c-x-${j}`, e));
      requests.forEach((m, j) => w.appendRequest(`c-q-${j}`, m));
      // A frame's byte count goes through the same digits.
      w.append('c-d', 'd', undefined, Buffer.alloc(1_000_000, 0x61));
    });
    expect(lines).toEqual([...ends.map((e, j) => expectedLine(`c-x-${j}`, 'x', 0, e)), ...requests.map((m, j) => expectedLine(`c-q-${j}`, 'q', 0, m)), '{"c":"c-d","k":"d","n":1000000}']);
  });
});

describe('response head (undici raw headers to the client list and the logged meta in one pass)', () => {
  const raw = (...pairs: string[]): Buffer[] => pairs.map((s) => Buffer.from(s, 'latin1'));
  /** What the log held before the one-pass split: parseHeaders' object, credentials removed. */
  const viaParseHeaders = (status: number, headers: Buffer[]) => {
    const parsed = undiciUtil.parseHeaders(headers) as Record<string, string | string[]>;
    for (const name of ['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization', 'api-key', 'x-goog-api-key']) delete parsed[name];
    return JSON.stringify({ status, headers: parsed });
  };

  /** The response-head meta's JSON as the log records it (the writer's spelling). */
  const logged = async (status: number, recorded: RecordedResponseHead) => {
    const [line] = await headerLines((w) => w.appendResponseHead('c-r', status, recorded));
    const text = jsonText((out) => writeResponseHeadMeta(out, status, recorded));
    expect(line).toBe(`{"c":"c-r","k":"r","n":0,"m":${text}}`);
    return text;
  };

  it('logs what parseHeaders gives, less credentials, and forwards all but hop-by-hop, in order', async () => {
    const headers = raw('Content-Type', 'text/event-stream', 'Request-Id', 'req_1', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Odd', 'ünï "q" \\', 'anthropic-ratelimit-requests-remaining', '99');
    const head = splitResponseHead(200, headers);
    expect(await logged(200, head.recorded)).toBe(viaParseHeaders(200, headers));
    expect(head.forClient).toEqual(['content-type', 'text/event-stream', 'request-id', 'req_1', 'x-odd', 'ünï "q" \\', 'anthropic-ratelimit-requests-remaining', '99']);
  });

  it('a repeated name is an array in the log (as parseHeaders has it) and repeated lines for the client; set-cookie never logged', async () => {
    const headers = raw('Set-Cookie', 'session=secret-1', 'Via', 'a', 'via', 'b', 'set-cookie', 'other=secret-2', 'Content-Length', '12');
    const head = splitResponseHead(429, headers);
    const text = await logged(429, head.recorded);
    expect(text).toBe(viaParseHeaders(429, headers));
    expect(JSON.parse(text)).toEqual({ status: 429, headers: { via: ['a', 'b'], 'content-length': '12' } });
    expect(text).not.toContain('secret');
    expect(head.forClient).toEqual(['set-cookie', 'session=secret-1', 'via', 'a', 'via', 'b', 'set-cookie', 'other=secret-2', 'content-length', '12']);
  });

  it('a credential header is dropped from the log, its value nowhere', async () => {
    const headers = raw('x-api-key', 'sk-never', 'content-type', 'application/json', 'X-Api-Key', 'sk-never-2');
    const head = splitResponseHead(200, headers);
    expect(await logged(200, head.recorded)).toBe('{"status":200,"headers":{"content-type":"application/json"}}');
    expect(viaParseHeaders(200, headers)).toBe('{"status":200,"headers":{"content-type":"application/json"}}');
  });
});
