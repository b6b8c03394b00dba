import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactJson } from '../../../src/core/compact-json.js';
import { ErrorCode, isRollerError } from '../../../src/core/errors.js';

// Strings that stress the scanner: quotes, backslashes (runs of them before a quote), whitespace and unicode.
const tricky = fc.stringMatching(/^[ "\\\n\t\r{}[\]:,aé😀\u0001\u2028]*$/);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(tricky, fc.string()), tie('v'), { maxKeys: 5 }),
  ),
})).v;

describe('compactJson', () => {
  it('of JSON.stringify(v, null, indent) is JSON.stringify(v), byte for byte', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(2, 4, '\t'), (v, indent) => {
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
