import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStageContext } from '../../../src/core/context.js';
import { createJsonlSink } from '../../../src/core/jsonl-sink.js';
import type { Call } from '../../../src/schemas/index.js';
import { encodeCallLine } from '../../../src/sinks/calls-jsonl/sink.js';
import { findContextMember, readCallsLazily } from '../../../src/sources/archive/calls-reader.js';
import { generatesOutput, hasContext, rawContextBytesOf, withCallFields } from '../../../src/schemas/call-context.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('calls-reader');
const at = (line: string) => {
  const buf = Buffer.from(line);
  const m = findContextMember(buf, 0, buf.length);
  return m && { head: buf.toString('utf8', 0, m.keyFrom), value: buf.toString('utf8', m.valueFrom) };
};

describe('findContextMember: the top-level "context" member, found without walking the body', () => {
  it('skips a nested "context" key, the same text inside strings (quotes are escaped there), and escapes', () => {
    const line = '{"a":{"context":1},"b":"x\\",\\"context\\":2","c":"\\\\","context":{"messages":[{"context":3}]}}';
    expect(at(line)).toEqual({ head: '{"a":{"context":1},"b":"x\\",\\"context\\":2","c":"\\\\"', value: '{"messages":[{"context":3}]}}' });
  });
  it('a context as the first member, and a line without one', () => {
    expect(at('{"context":null}')).toEqual({ head: '', value: 'null}' });
    expect(at('{"a":1,"contexts":2}')).toBeNull();
  });
});

describe('readCallsLazily', () => {
  const call = (i: number, context: unknown, protocol = 'anthropic-messages') => ({ schema: 'roller.call/v1', call_id: `c-${i}`, seq: i, protocol, native_identity: {}, output: { content: [{ type: 'text', text: 'say "context": hi' }] }, context });

  it('round trip: contexts stay bytes (never parsed unless read), written back byte for byte', async () => {
    // Spacing and escapes a re-serialization would change: only a byte copy keeps them.
    const lines = [
      `${JSON.stringify(call(1, null)).slice(0, -'null}'.length)}null}`,
      `${JSON.stringify({ ...call(2, 0, 'openai-responses') }).slice(0, -2)}{ "model" : "m", "s": "\\u00e9\\/", "generate":false }}`,
      `${JSON.stringify(call(3, 0)).slice(0, -2)}{"messages":[{"role":"user","content":"a,\\"context\\":b"}]}}`,
      // "generate": false means something to the Responses API only: this call generated.
      `${JSON.stringify(call(4, 0)).slice(0, -2)}{"model":"m","generate":false}}`,
    ];
    const path = join(tmp.path, 'calls.jsonl');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const calls = await readCallsLazily(path);
    expect(calls.map((c) => c.call_id)).toEqual(['c-1', 'c-2', 'c-3', 'c-4']);
    expect(calls.map((c) => rawContextBytesOf(c)?.toString())).toEqual(['null', '{ "model" : "m", "s": "\\u00e9\\/", "generate":false }', '{"messages":[{"role":"user","content":"a,\\"context\\":b"}]}', '{"model":"m","generate":false}']);
    expect(calls.map(hasContext)).toEqual([false, true, true, true]);
    expect(calls.map(generatesOutput)).toEqual([true, false, true, true]);
    // A field change keeps the context lazy; reading it parses it.
    const moved = withCallFields(calls[2]!, { participant_id: 'p' } as Partial<Call>);
    expect(rawContextBytesOf(moved)).toBe(rawContextBytesOf(calls[2]!));
    expect((moved.context as { messages: unknown[] }).messages).toHaveLength(1);
    // Setting a context replaces the bytes on that object only.
    const replaced = withCallFields(calls[1]!, {});
    (replaced as { context: unknown }).context = { model: 'other' };
    expect(rawContextBytesOf(replaced)).toBeUndefined();
    expect(rawContextBytesOf(calls[1]!)?.toString()).toContain('"generate":false');

    const out = join(tmp.path, 'out.jsonl');
    await createJsonlSink({ path: out }).consume((async function* () { for (const c of calls) yield encodeCallLine(c); })(), createStageContext());
    expect(readFileSync(out, 'utf8')).toBe(`${lines.join('\n')}\n`);
  });

  it('a line in another layout (members after the context) is read whole, nothing lost', async () => {
    const path = join(tmp.path, 'foreign.jsonl');
    writeFileSync(path, `${JSON.stringify({ schema: 'roller.call/v1', call_id: 'c-1', seq: 1, context: { model: 'm' }, protocol: 'anthropic-messages', native_identity: { session_id: 'S' } })}\n`);
    const [c] = await readCallsLazily(path);
    expect(c).toMatchObject({ call_id: 'c-1', protocol: 'anthropic-messages', native_identity: { session_id: 'S' }, context: { model: 'm' } });
    expect(rawContextBytesOf(c!)).toBeUndefined();
  });

  it('a damaged line is a typed error with file and line; a corrupt context fails only when read, naming its line', async () => {
    const path = join(tmp.path, 'bad.jsonl');
    writeFileSync(path, `${JSON.stringify(call(1, { a: 1 }))}\n{"schema":"roller.call/v1","call_id":\n`);
    await expect(readCallsLazily(path)).rejects.toThrow(`${path}:2: not valid JSON`);
    const cut = join(tmp.path, 'cut.jsonl');
    writeFileSync(cut, `${JSON.stringify(call(1, { a: 1 }))}\n${JSON.stringify(call(2, { a: 1 })).slice(0, -3)}`);
    await expect(readCallsLazily(cut)).rejects.toMatchObject({ code: 'ROLLER_JSONL_TRUNCATED_LINE' });
    const corrupt = join(tmp.path, 'corrupt.jsonl');
    writeFileSync(corrupt, `${JSON.stringify(call(1, 0)).slice(0, -2)}{"a":}}\n`);
    const [c] = await readCallsLazily(corrupt);
    expect(() => c!.context).toThrow(`${corrupt}:1: the request context is not valid JSON`);
  });
});
