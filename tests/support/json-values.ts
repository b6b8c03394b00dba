import fc from 'fast-check';

// Strings that stress a JSON scanner and JSON.stringify alike: quotes, backslashes (runs of them before a quote),
// whitespace, unicode beyond Latin-1, a lone surrogate (escaped by JSON.stringify), control characters.
const text = fc.stringMatching(/^[ "\\\n\t\r{}[\]:,aé…😀\u0001\u2028\ud800]*$/);

/**
 * Values as JSON.stringify meets them: those strings, numbers (NaN and infinities become null), undefined and
 * functions (left out of objects, null in arrays), Dates (toJSON), nested and empty containers.
 */
export const stringifiable = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.string(),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constant(() => 1),
    fc.date({ noInvalidDate: true }),
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(text, fc.string()), tie('v'), { maxKeys: 5 }),
  ),
})).v;

/** A document: an array or an object of such values (whose JSON.stringify is always a string). */
export const stringifiableDocument = fc.oneof(fc.array(stringifiable), fc.dictionary(fc.string(), stringifiable));
