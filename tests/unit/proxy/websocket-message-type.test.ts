import { describe, expect, it } from 'vitest';
import { eventType, leadingType } from '../../../src/sources/proxy/websocket-message-type.js';
import { seededRandom as rng } from '../../support/seeded-random.js';

/** Strings that try the scanner: quotes, backslashes, braces, brackets, commas, colons, non-ASCII. */
const TRICKY = ['type', 'response.create', 'a"b', 'a\\', '\\"', '{', '}', '[', ']', ',', ':', '"type":"x"', 'é', '😀', ' ', ''];

function value(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 3 || r < 0.3) return TRICKY[Math.floor(next() * TRICKY.length)]! + (next() < 0.3 ? String(next()) : '');
  if (r < 0.4) return Math.floor(next() * 1e6) / (next() < 0.5 ? 1 : 7);
  if (r < 0.5) return [true, false, null][Math.floor(next() * 3)];
  if (r < 0.75) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  return object(next, depth + 1);
}

function object(next: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = Math.floor(next() * 5);
  for (let i = 0; i < n; i++) out[next() < 0.3 ? 'type' : TRICKY[Math.floor(next() * TRICKY.length)]! + i] = value(next, depth);
  return out;
}

/** What JSON.parse says the type is: the reference. */
function parsedType(text: string): string {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { type?: unknown }).type === 'string' ? (v as { type: string }).type : '';
  } catch {
    return '';
  }
}

describe('leadingType, differential against JSON.parse', () => {
  it('whole documents: the same type as JSON.parse (escaped keys, duplicate keys, whitespace, nesting, non-objects)', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = rng(seed);
      const doc = next() < 0.1 ? value(next, 0) : object(next, 0);
      let text = JSON.stringify(doc, null, next() < 0.3 ? Math.floor(next() * 3) : undefined);
      if (next() < 0.2) text = text.replaceAll('"type"', '"\\u0074ype"'); // the same key, escaped
      if (next() < 0.2 && text.startsWith('{') && text !== '{}') text = `{"type":"first",${text.slice(1)}`; // a duplicate: the last wins
      if (next() < 0.2 && text.endsWith('}') && text !== '{}') text = `${text.slice(0, -1)},"type":"last"}`;
      const buf = Buffer.from(`${next() < 0.2 ? ' \n\t' : ''}${text}`);
      expect(leadingType(buf), `seed ${seed}: ${text}`).toBe(parsedType(buf.toString()));
      expect(eventType(buf), `seed ${seed}: ${text}`).toBe(parsedType(buf.toString()));
    }
  });

  it('a prefix: the type of the top-level members complete in it, as JSON.parse reads those members alone', () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const next = rng(seed);
      const members = ['"type":"response.create"', ...Object.entries(object(next, 0)).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)];
      const text = `{${members.join(',')}}`;
      const cutAt = 1 + Math.floor(next() * (Buffer.byteLength(text) - 1));
      const prefix = Buffer.from(text).subarray(0, cutAt);
      // The members whole in the prefix, then the document they alone make: its type is the reference.
      let whole = 0;
      for (let end = 1; whole < members.length && (end += Buffer.byteLength(members[whole]!)) <= cutAt; end++) whole++;
      expect(leadingType(prefix), `seed ${seed}: ${prefix.toString()}`).toBe(whole === 0 ? '' : parsedType(`{${members.slice(0, whole).join(',')}}`));
    }
  });

  it('a type that is not a string, and a text that is not an object, have none', () => {
    for (const text of ['{"type":5}', '{"type":null}', '{"type":{"a":"response.create"}}', '["response.create"]', '"type"', 'not json', '']) {
      expect(leadingType(Buffer.from(text))).toBe('');
      expect(eventType(Buffer.from(text))).toBe('');
    }
  });
});
