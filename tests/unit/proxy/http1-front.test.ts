import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRequestHead } from '../../../src/sources/proxy/http1-front.js';
import { sharedDir } from '../../support/paths.js';

const head = (...lines: string[]) => lines.join('\r\n');

describe('the HTTP/1.1 front serves plain requests and leaves the rest to node', () => {
  it('reads a harness request: method, target with its query, headers as sent, the body length', () => {
    const r = parseRequestHead(head('POST /v1/messages?beta=true HTTP/1.1', 'Host: 127.0.0.1:4000', 'Content-Type: application/json', 'x-api-key:dummy', 'Content-Length: 42'));
    expect(r).toEqual({
      method: 'POST',
      url: '/v1/messages?beta=true',
      rawHeaders: ['Host', '127.0.0.1:4000', 'Content-Type', 'application/json', 'x-api-key', 'dummy', 'Content-Length', '42'],
      contentLength: 42,
      close: false,
      isHead: false,
    });
  });

  it('strips spaces and tabs around a value, as node does, and nothing else (obs-text such as NBSP stays)', () => {
    const r = parseRequestHead(head('GET / HTTP/1.1', 'host: x', 'x-a: \t  v  w \t', 'x-b: \u00a0nb\u00a0', 'x-c:'));
    expect(r!.rawHeaders).toEqual(['host', 'x', 'x-a', 'v  w', 'x-b', '\u00a0nb\u00a0', 'x-c', '']);
    expect(r!.contentLength).toBe(0);
  });

  it('sees connection: close among other tokens, and HEAD', () => {
    expect(parseRequestHead(head('HEAD /x HTTP/1.1', 'host: x', 'Connection: keep-alive, Close'))).toMatchObject({ close: true, isHead: true });
    expect(parseRequestHead(head('GET /x HTTP/1.1', 'host: x', 'connection: closed'))).toMatchObject({ close: false });
  });

  it.each([
    ['HTTP/1.0', head('GET / HTTP/1.0', 'host: x')],
    ['an absolute target', head('GET http://example.com/ HTTP/1.1', 'host: x')],
    ['the * target', head('OPTIONS * HTTP/1.1', 'host: x')],
    ['a lower-case method', head('post / HTTP/1.1', 'host: x')],
    ['two spaces in the request line', head('GET  / HTTP/1.1', 'host: x')],
    ['a space in the target', head('GET /a b HTTP/1.1', 'host: x')],
    ['an empty line before the request', head('', 'GET / HTTP/1.1', 'host: x')],
    ['no Host', head('GET / HTTP/1.1', 'content-length: 0')],
    ['a chunked body', head('POST / HTTP/1.1', 'host: x', 'Transfer-Encoding: chunked')],
    ['expect: 100-continue', head('POST / HTTP/1.1', 'host: x', 'Expect: 100-continue', 'content-length: 3')],
    ['an upgrade', head('GET /v1/responses HTTP/1.1', 'host: x', 'Connection: Upgrade', 'Upgrade: websocket')],
    ['an upgrade header alone', head('GET / HTTP/1.1', 'host: x', 'upgrade: h2c')],
    ['two lengths', head('POST / HTTP/1.1', 'host: x', 'content-length: 3', 'content-length: 3')],
    ['a signed length', head('POST / HTTP/1.1', 'host: x', 'content-length: +3')],
    ['a length with a space inside', head('POST / HTTP/1.1', 'host: x', 'content-length: 3 4')],
    ['a length beyond 15 digits', head('POST / HTTP/1.1', 'host: x', 'content-length: 1234567890123456')],
    ['a space before the colon', head('GET / HTTP/1.1', 'host : x')],
    ['a folded line', head('GET / HTTP/1.1', 'host: x', 'x-a: one', ' two')],
    ['a control character in a value', head('GET / HTTP/1.1', 'host: x', 'x-a: o\u0001k')],
    ['a bare LF inside a value', head('GET / HTTP/1.1', 'host: x', 'x-a: o\nk')],
    ['a bare CR inside a value', head('GET / HTTP/1.1', 'host: x', 'x-a: o\rk')],
    ['a name that is no token', head('GET / HTTP/1.1', 'host: x', 'x(a): v')],
    ['an empty name', head('GET / HTTP/1.1', 'host: x', ': v')],
  ])('goes to node: %s', (_what, text) => {
    expect(parseRequestHead(text)).toBeUndefined();
  });
});

/** The request logs of the real harness CLIs' lab runs (any requests.jsonl under shared/lab/<harness>). */
const lab = join(sharedDir, 'lab');
const labLogs = existsSync(lab) ? readdirSync(lab, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('requests.jsonl')) : [];
if (labLogs.length === 0) console.warn(`front lab check skipped: no request logs under ${lab} (it sits beside the checkout in CI and on developer machines)`);

describe.skipIf(labLogs.length === 0)('what real harnesses send', () => {
  it('every request the real CLIs sent in the lab is one the front serves itself (none falls to node)', () => {
    const harnesses = new Set<string>();
    let requests = 0;
    for (const log of labLogs) {
      for (const line of readFileSync(join(lab, log), 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const r = JSON.parse(line) as { method?: string; url?: string; path?: string; headers?: Record<string, string | string[]> };
        if (!r.method || !r.headers) continue;
        // The lab server logged node's view: names in lower case, values as sent.
        const lines = [`${r.method} ${r.url ?? r.path} HTTP/1.1`, ...Object.entries(r.headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`))];
        expect(parseRequestHead(lines.join('\r\n')), `${log}: ${lines[0]}`).toBeDefined();
        harnesses.add(log.split('/')[0]!);
        requests++;
      }
    }
    expect([...harnesses].sort()).toEqual(['claude-code', 'codex', 'openclaw', 'opencode', 'pi']);
    expect(requests).toBeGreaterThan(20);
  });
});
