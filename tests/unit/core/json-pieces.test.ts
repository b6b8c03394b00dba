import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPieces } from '../../../src/core/json-pieces.js';
import { stringifiableDocument } from '../../support/json-values.js';

describe('jsonPieces', () => {
  it('joined, is JSON.stringify(v, null, indent) at every split depth', () => {
    fc.assert(
      fc.property(stringifiableDocument, fc.constantFrom(0, 1, 2, 4, 12), fc.integer({ min: 0, max: 5 }), (v, indent, depth) => {
        expect([...jsonPieces(v, indent, depth)].join('')).toBe(JSON.stringify(v, null, indent));
      }),
      { numRuns: 1000 },
    );
  });

  it('calls toJSON with the key it is found under, as JSON.stringify does', () => {
    const keys: string[] = [];
    const probe = { toJSON: (k: string) => (keys.push(k), { k }) };
    const doc = { a: probe, list: [probe, { deep: probe }] };
    const expected = JSON.stringify(doc, null, 2);
    const seenByStringify = keys.splice(0);
    expect([...jsonPieces(doc, 2, 3)].join('')).toBe(expected);
    expect(keys).toEqual(seenByStringify);
  });

  it('a large document comes in pieces far smaller than the whole', () => {
    const doc = { steps: Array.from({ length: 2000 }, (_, i) => ({ i, text: `step ${i} …`.repeat(50) })) };
    const pieces = [...jsonPieces(doc)];
    expect(pieces.join('')).toBe(JSON.stringify(doc, null, 2));
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(1000);
  });

  it('a value that serializes to nothing is an error, not a document', () => {
    expect(() => [...jsonPieces(undefined)]).toThrow(TypeError);
  });
});
