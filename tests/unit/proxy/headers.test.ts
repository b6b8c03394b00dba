import { describe, expect, it } from 'vitest';
import { proxyHeaders } from '../../../src/harnesses/index.js';
import { splitRequestHeaders } from '../../../src/sources/proxy/headers.js';

/** The shipped harnesses' identity headers, as roller's pipelines hand them to the proxy. */
const IDENTITY = proxyHeaders().identityHeaders;

describe('request headers (node rawHeaders)', () => {
  it('forwards all but hop-by-hop and roller headers as they came, and records identity, never values of credentials', () => {
    const raw = [
      'Host', '127.0.0.1:9', 'Connection', 'keep-alive, X-Trace-Hop', 'X-Trace-Hop', 'drop me', 'Content-Type', 'application/json',
      'x-api-key', 'sk-secret', 'Accept', 'text/event-stream', 'Accept', 'application/json',
      'X-Claude-Code-Session-Id', 'sess-1', 'x-claude-code-session-id', 'sess-2', 'X-Roller-Run-Id', 'run-9', 'Content-Encoding', 'zstd',
      'x-opencode-session', 'oc-1', 'Transfer-Encoding', 'chunked',
    ];
    const split = splitRequestHeaders(raw, { 'x-opencode-session': 'session_id' }, IDENTITY);
    expect(split.forward).toEqual([
      'Content-Type', 'application/json', 'x-api-key', 'sk-secret', 'Accept', 'text/event-stream', 'Accept', 'application/json',
      'X-Claude-Code-Session-Id', 'sess-1', 'x-claude-code-session-id', 'sess-2', 'Content-Encoding', 'zstd',
    ]);
    // roller's and correlation headers override what the harness sent; the first occurrence counts.
    expect(split.identity).toEqual({ session_id: 'oc-1', run_id: 'run-9' });
    expect(split.dropped).toEqual(['x-opencode-session', 'x-roller-run-id']);
    expect(split.contentEncoding).toBe('zstd');
    expect(JSON.stringify({ identity: split.identity, dropped: split.dropped })).not.toContain('sk-secret');
  });

  it('records identity and drops, and forwards the rest, for a plain lower-case request', () => {
    const raw = ['content-type', 'application/json', 'session-id', 'codex-7', 'x-roller-agent-id', 'a1', 'connection', 'close', 'authorization', 'Bearer x'];
    const split = splitRequestHeaders(raw, {}, IDENTITY);
    expect(split.identity).toEqual({ session_id: 'codex-7', agent_id: 'a1' });
    expect(split.dropped).toEqual(['x-roller-agent-id']);
    const forwarded: Record<string, string> = {};
    for (let i = 0; i < split.forward.length; i += 2) forwarded[split.forward[i]!] = split.forward[i + 1]!;
    expect(forwarded).toEqual({ 'content-type': 'application/json', 'session-id': 'codex-7', authorization: 'Bearer x' });
  });

  it('a correlation table is its own: two proxies with different tables split the same headers differently, and names of Object.prototype are ordinary headers', () => {
    const raw = ['X-Trace', 't-1', 'x-opencode-session', 'oc-1', 'Constructor', 'c', 'toString', 's', 'x-roller-future-header', 'f', 'Session-Id', 'h-1'];
    const a = splitRequestHeaders(raw, { 'x-opencode-session': 'session_id' }, IDENTITY);
    const b = splitRequestHeaders(raw, { 'x-trace': 'run_id', 'session-id': 'thread_id' }, IDENTITY);
    const none = splitRequestHeaders(raw, {}, IDENTITY);
    expect(a.identity).toEqual({ session_id: 'oc-1' });
    expect(a.dropped).toEqual(['x-opencode-session', 'x-roller-future-header']);
    expect(a.forward).toEqual(['X-Trace', 't-1', 'Constructor', 'c', 'toString', 's', 'Session-Id', 'h-1']);
    // A correlation header wins over the harness identity header of the same name (removed, recorded as configured).
    expect(b.identity).toEqual({ run_id: 't-1', thread_id: 'h-1' });
    expect(b.dropped).toEqual(['session-id', 'x-roller-future-header', 'x-trace']);
    expect(none.identity).toEqual({ session_id: 'h-1' });
    expect(none.dropped).toEqual(['x-roller-future-header']);
    expect(none.forward).toEqual(['X-Trace', 't-1', 'x-opencode-session', 'oc-1', 'Constructor', 'c', 'toString', 's', 'Session-Id', 'h-1']);
  });

  it("records a harness's identity headers only from the tables it is given (the adapters' identityHeaders)", () => {
    const raw = ['x-claude-code-session-id', 's-1', 'thread-id', 't-1', 'x-deepseek-harness-session-id', 'd-1'];
    expect(splitRequestHeaders(raw).identity).toEqual({});
    expect(splitRequestHeaders(raw, {}, { 'X-Claude-Code-Session-Id': 'session_id' }).identity).toEqual({ session_id: 's-1' });
    expect(splitRequestHeaders(raw, {}, IDENTITY).identity).toEqual({ session_id: 's-1', thread_id: 't-1' });
    expect(IDENTITY).toMatchObject({ 'x-claude-code-agent-id': 'agent_id', 'x-session-id': 'session_id', conversation_id: 'session_id' });
  });
});
