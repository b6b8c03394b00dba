import { describe, expect, it } from 'vitest';
import { splitRequestHeaders } from '../../../src/sources/proxy/headers.js';

describe('request headers (node rawHeaders)', () => {
  it('forwards all but hop-by-hop and roller headers as they came, and records identity, never values of credentials', () => {
    const raw = [
      'Host', '127.0.0.1:9', 'Connection', 'keep-alive, X-Trace-Hop', 'X-Trace-Hop', 'drop me', 'Content-Type', 'application/json',
      'x-api-key', 'sk-secret', 'Accept', 'text/event-stream', 'Accept', 'application/json',
      'X-Claude-Code-Session-Id', 'sess-1', 'x-claude-code-session-id', 'sess-2', 'X-Roller-Run-Id', 'run-9', 'Content-Encoding', 'zstd',
      'x-opencode-session', 'oc-1', 'Transfer-Encoding', 'chunked',
    ];
    const split = splitRequestHeaders(raw, { 'x-opencode-session': 'session_id' });
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
    const split = splitRequestHeaders(raw);
    expect(split.identity).toEqual({ session_id: 'codex-7', agent_id: 'a1' });
    expect(split.dropped).toEqual(['x-roller-agent-id']);
    const forwarded: Record<string, string> = {};
    for (let i = 0; i < split.forward.length; i += 2) forwarded[split.forward[i]!] = split.forward[i + 1]!;
    expect(forwarded).toEqual({ 'content-type': 'application/json', 'session-id': 'codex-7', authorization: 'Bearer x' });
  });
});
