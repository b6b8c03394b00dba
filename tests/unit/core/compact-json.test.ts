import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactJson } from '../../../src/core/compact-json.js';
import { ErrorCode, isRollerError } from '../../../src/core/errors.js';
import { stringifiableDocument } from '../../support/json-values.js';

describe('compactJson', () => {
  it('of JSON.stringify(v, null, indent) is JSON.stringify(v), byte for byte', () => {
    fc.assert(
      fc.property(stringifiableDocument, fc.constantFrom(2, 4, '\t'), (v, indent) => {
        const pretty = Buffer.from(`${JSON.stringify(v, null, indent)}\n`);
        expect(compactJson(pretty).toString()).toBe(JSON.stringify(v));
        expect(compactJson(pretty, { newline: true }).toString()).toBe(`${JSON.stringify(v)}\n`);
      }),
      { numRuns: 500 },
    );
  });

  it('a string that never closes is a typed error naming the file', () => {
    let err: unknown;
    try {
      compactJson(Buffer.from('{\n  "a": "cut \\"here'), { origin: 'x/trace_SFT.json' });
    } catch (e) {
      err = e;
    }
    expect(isRollerError(err, ErrorCode.JSON_INVALID)).toBe(true);
    expect((err as Error).message).toContain('x/trace_SFT.json');
  });
});
