import { isUtf8 } from 'node:buffer';
import { appendFile, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, isRollerError } from '../../../src/core/errors.js';
import { projectCalls, publishWireLog, readWireFrames, WireLogWriter, type RequestMeta } from '../../../src/sources/proxy/index.js';
import { encodeCallLine } from '../../../src/sinks/calls-jsonl/sink.js';
import { anthropicEvents } from '../../../src/sources/scripted-model/encode-anthropic.js';
import { collect } from '../../support/http.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('wire-log');

const message = {
  id: 'msg_wire_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [{ type: 'text', text: 'hello' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 2 },
};
const SSE = Buffer.from([...anthropicEvents(message)].join(''));

function meta(seq: number, session: string): RequestMeta {
  return {
    seq,
    transport: 'http',
    protocol: 'anthropic-messages',
    method: 'POST',
    path: '/v1/messages',
    upstream_path: '/v1/messages',
    started_at: Date.UTC(2026, 10, 30, 12, 0, seq),
    identity: { session_id: session },
    dropped: [],
  };
}

const body = (turns: number, session: string) =>
  Buffer.from(JSON.stringify({ model: 'm', stream: true, messages: Array.from({ length: turns }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${session} turn ${i} ${'x'.repeat(900)}` })), tools: [{ name: 'Bash' }] }));

/** One whole exchange: request, head, the SSE in two chunks, end. */
async function exchange(w: WireLogWriter, id: string, seq: number, session: string, turns: number): Promise<void> {
  w.append(id, 'q', meta(seq, session), body(turns, session));
  await w.flushed();
  w.append(id, 'r', { status: 200, headers: { 'content-type': 'text/event-stream' } });
  w.append(id, 'd', undefined, SSE.subarray(0, 100));
  w.append(id, 'd', undefined, SSE.subarray(100));
  w.append(id, 'x', { first_byte_at: Date.UTC(2026, 10, 30, 12, 0, seq), ended_at: Date.UTC(2026, 10, 30, 12, 0, seq + 1), upstream_ended: true, client_aborted: false, upstream_error: null, errors: [] });
}

/** Bytes of request frames' payloads, read from the frame headers. */
function requestBytesStored(log: Buffer): number {
  let at = 0;
  let total = 0;
  while (at < log.length) {
    const nl = log.indexOf(10, at);
    const h = JSON.parse(log.toString('utf8', at, nl)) as { k: string; n: number };
    if (h.k === 'q') total += h.n;
    at = nl + 1 + h.n + 1;
  }
  return total;
}

describe('wire log', () => {
  it('round-trips requests, delta-encoded across interleaved sessions when published, and projects one complete call per exchange', async () => {
    const path = join(tmp.path, 'a', 'wire.frames');
    const w = await WireLogWriter.open(path);
    let seq = 0;
    for (let turn = 1; turn <= 6; turn++) for (const s of ['sA', 'sB']) await exchange(w, `c-${s}-${turn}`, seq++, s, turn);
    await w.close();
    const whole = Array.from({ length: 6 }, (_, i) => 2 * body(i + 1, 'sA').length).reduce((a, b) => a + b, 0);
    // The live log holds every body whole (nothing is compared on the request path) ...
    expect(requestBytesStored(await readFile(path))).toBe(whole);
    // ... the published one stores the repeated conversation once: request frames hold only each new turn after the first.
    const published = join(tmp.path, 'a', 'published.frames');
    await publishWireLog(path, published, new Set());
    expect(requestBytesStored(await readFile(published))).toBeLessThan(whole / 3);

    for (const p of [path, published]) {
      const frames = await collect(readWireFrames(p));
      const requests = frames.filter((f) => f.k === 'q');
      expect(requests.map((f) => f.body.toString())).toEqual(Array.from({ length: 12 }, (_, i) => body(Math.floor(i / 2) + 1, i % 2 ? 'sB' : 'sA').toString()));
      expect(requests.every((f) => (f.m as RequestMeta).delta === undefined)).toBe(true);
      const calls = await collect(projectCalls(readWireFrames(p), { responsePath: 'raw/wire.frames' }));
      expect(calls).toHaveLength(12);
      for (const c of calls) {
        expect(c.response_id).toBe('msg_wire_1');
        expect(c.execution_status).toBe('completed');
        expect(c.capture_status).toBe('complete');
      }
      expect(calls[11]!.context).toEqual(JSON.parse(body(6, 'sB').toString()));
      expect(calls[0]!.started_at).toBe('2026-11-30T12:00:00.000Z');
    }
  });

  it('a follower sees frames as they land and ends when the writer closes', async () => {
    const path = join(tmp.path, 'b', 'wire.frames');
    const w = await WireLogWriter.open(path);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const c of projectCalls(readWireFrames(path, { follow: w }), { responsePath: 'raw/wire.frames' })) seen.push(c.call_id);
    })();
    await exchange(w, 'c-1', 0, 's', 1);
    await new Promise((r) => setTimeout(r, 150)); // idle longer than the follower's poll
    expect(seen).toEqual(['c-1']);
    await exchange(w, 'c-2', 1, 's', 2);
    await w.close();
    await reading;
    expect(seen).toEqual(['c-1', 'c-2']);
  });

  it('an exchange the log never ends (the proxy was killed) is still a call: interrupted, with what was captured', async () => {
    const path = join(tmp.path, 'c', 'wire.frames');
    const w = await WireLogWriter.open(path);
    await exchange(w, 'c-done', 0, 's', 1);
    w.append('c-cut', 'q', meta(1, 's'), body(2, 's'));
    w.append('c-cut', 'r', { status: 200, headers: { 'content-type': 'text/event-stream' } });
    w.append('c-cut', 'd', undefined, SSE.subarray(0, 200));
    await w.close();
    // and a crash in the middle of writing a frame
    await appendFile(path, '{"c":"c-cut","k":"d","n":500}\nonly a few bytes');
    let truncated = 0;
    const calls = await collect(projectCalls(readWireFrames(path, { onTruncated: (n) => (truncated = n) }), { responsePath: 'raw/wire.frames' }));
    expect(truncated).toBeGreaterThan(0);
    expect(calls.map((c) => [c.call_id, c.execution_status, c.response_capture_status])).toEqual([
      ['c-done', 'completed', 'complete'],
      ['c-cut', 'interrupted', 'partial'],
    ]);
    expect(calls[1]!.errors.map((e) => e.code)).toContain(ErrorCode.WIRE_LOG_INCOMPLETE);
    expect(calls[1]!.context).toEqual(JSON.parse(body(2, 's').toString()));
  });

  it('a request body goes to calls.jsonl as its bytes (key order, number spelling, escapes); one that is not one line of UTF-8 as its JSON', async () => {
    const path = join(tmp.path, 'bytes', 'wire.frames');
    const w = await WireLogWriter.open(path);
    const exact = Buffer.from('{"stream":true,"n":1.0,"e":1e2,"s":"caf\\u00e9 café \\u2028","model":"m","messages":[]}');
    const pretty = Buffer.from('{\n  "model": "p",\n  "n": 1.0\n}');
    const notUtf8 = Buffer.concat([Buffer.from('{"model":"u","t":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const notJson = Buffer.from('{"model":');
    const bodies = [exact, pretty, notUtf8, notJson];
    for (const [i, b] of bodies.entries()) {
      w.append(`c-${i}`, 'q', meta(i, `s${i}`), b);
      w.append(`c-${i}`, 'x', { first_byte_at: null, ended_at: Date.UTC(2026, 10, 30, 12, 0, i), upstream_ended: false, client_aborted: false, upstream_error: 'x', errors: [] });
    }
    await w.close();
    const calls = await collect(projectCalls(readWireFrames(path), { responsePath: 'raw/wire.frames' }));
    const lines = calls.map((c) => encodeCallLine(c).bytes);
    for (const line of lines) {
      expect(isUtf8(line)).toBe(true);
      expect(line.indexOf(10)).toBe(line.length - 1);
    }
    // As sent, byte for byte, and parsed only when read.
    expect(lines[0]!.includes(Buffer.concat([Buffer.from('"context":'), exact, Buffer.from('}\n')]))).toBe(true);
    expect(calls[0]!.request_model).toBe('m');
    expect(calls[0]!.context).toEqual(JSON.parse(exact.toString()));
    // Several lines: re-serialized on one.
    expect(lines[1]!.toString()).toContain('"context":{"model":"p","n":1}}');
    expect(calls[1]!.request_model).toBe('p');
    // Not UTF-8: its text (U+FFFD for the bad bytes), never the raw bytes.
    expect(lines[2]!.toString()).toContain('"context":{"model":"u","t":"\ufffd\ufffd"}}');
    expect(calls[2]!.request_model).toBe('u');
    // Not JSON: no context, said so.
    expect(calls[3]!.context).toBeNull();
    expect(calls[3]!.errors.map((e) => e.code)).toContain(ErrorCode.BODY_DECODE_FAILED);
  });

  it('a corrupt frame header is a typed error naming the file and byte offset, after the intact frames', async () => {
    const path = join(tmp.path, 'd', 'wire.frames');
    const w = await WireLogWriter.open(path);
    await exchange(w, 'c-ok', 0, 's', 1);
    await w.close();
    const good = (await readFile(path)).length;
    await appendFile(path, 'this is not a frame header\n');
    const frames: string[] = [];
    const err = await (async () => {
      for await (const f of readWireFrames(path)) frames.push(f.k);
    })().catch((e: unknown) => e);
    expect(frames).toEqual(['q', 'r', 'd', 'd', 'x']);
    expect(isRollerError(err, ErrorCode.WIRE_LOG_CORRUPT)).toBe(true);
    expect((err as Error).message).toContain(`${path}: byte ${good}`);
  });

  it('a delta whose base is not in the log (a log cut at the front) leaves the body out, saying why', async () => {
    const path = join(tmp.path, 'e', 'wire.frames');
    const w = await WireLogWriter.open(path);
    await exchange(w, 'c-1', 0, 's', 3);
    const firstFrames = 5; // q r d d x
    await exchange(w, 'c-2', 1, 's', 4);
    await w.close();
    const publishedPath = join(tmp.path, 'e', 'published.frames');
    await publishWireLog(path, publishedPath, new Set());
    const all = await readFile(publishedPath);
    // Drop the first exchange (its five frames), keeping the second, whose request is a delta against it.
    const lines = all.toString('latin1');
    let cut = 0;
    for (let i = 0; i < firstFrames; i++) {
      const nl = lines.indexOf('\n', cut);
      const n = (JSON.parse(lines.slice(cut, nl)) as { n: number }).n;
      cut = nl + 1 + n + 1;
    }
    const cutPath = join(tmp.path, 'e', 'cut.frames');
    await writeFile(cutPath, all.subarray(cut));
    const calls = await collect(projectCalls(readWireFrames(cutPath), { responsePath: 'raw/wire.frames' }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.context).toBeNull();
    expect(calls[0]!.capture_status).toBe('partial');
    await truncate(cutPath, 0);
  });

  it('appends made while a write is out are written together, every frame intact and in order', async () => {
    const path = join(tmp.path, 'many', 'wire.frames');
    const w = await WireLogWriter.open(path);
    const expected: Buffer[] = [];
    for (let i = 0; i < 4000; i++) {
      const chunk = Buffer.alloc(200 + ((i * 37) % 3800), 97 + (i % 26));
      expected.push(chunk);
      w.append(`c-${String(i).padStart(6, '0')}`, 'd', undefined, chunk);
      if (i % 150 === 0) await new Promise((r) => setTimeout(r, 2)); // let writes complete between bursts
    }
    await w.close();
    let n = 0;
    for await (const f of readWireFrames(path)) {
      expect(f.c).toBe(`c-${String(n).padStart(6, '0')}`);
      expect(Buffer.compare(f.body, expected[n]!)).toBe(0);
      n++;
    }
    expect(n).toBe(4000);
  });

  it('a log on a file that refuses writes fails once, for good: waiters rejected, the failure reported, close() rejects with it', async () => {
    const dir = join(tmp.path, 'full');
    const path = join(dir, 'wire.frames');
    await WireLogWriter.open(join(dir, 'other.frames')).then((x) => x.close()); // creates the directory
    await symlink('/dev/full', path);
    const failures: Error[] = [];
    const w = await WireLogWriter.open(path, { onFailure: (e) => failures.push(e) });
    w.append('c-1', 'q', meta(0, 's'), body(1, 's'));
    const err = await w.flushed().catch((e: unknown) => e);
    expect(isRollerError(err, ErrorCode.WIRE_LOG_WRITE_FAILED)).toBe(true);
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toMatch(/ENOSPC/);
    w.append('c-2', 'q', meta(1, 's'), body(1, 's')); // nothing after the gap
    expect(w.failure).toBe(err);
    await expect(w.close()).rejects.toBe(err);
    expect(failures).toEqual([err]);
  });
});
