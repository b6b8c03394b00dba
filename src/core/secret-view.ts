/**
 * Text as an echo of a secret may spell it: `\uHHHH` (JSON), `\/` and `%HH` (URL) escapes read as the characters they
 * stand for, each decoded character mapped back to the span of text it came from. What a masker searches.
 */
export interface DecodedView {
  decoded: string;
  /** Where in the text decoded character i begins. */
  start(i: number): number;
  /** Where in the text decoded character i ends (exclusive). */
  end(i: number): number;
  /** Where an escape cut short by the end of the text begins (text.length: none). */
  cutEscape: number;
}

const ESCAPE = /\\u([0-9a-fA-F]{4})|\\\/|%([0-9a-fA-F]{2})/g;
const CUT = /(?:\\(?:u[0-9a-fA-F]{0,3})?|%[0-9a-fA-F]?)$/;

export function decodedView(text: string): DecodedView {
  const cut = CUT.exec(text);
  const cutEscape = cut ? cut.index : text.length;
  // The escapes decoded, as (decoded position, text position, text length): memory grows with escapes, not text.
  const at: number[] = [];
  const from: number[] = [];
  const length: number[] = [];
  let decoded = '';
  let done = 0;
  if (text.includes('\\') || text.includes('%')) {
    for (const m of text.matchAll(ESCAPE)) {
      const code = m[1] !== undefined ? parseInt(m[1], 16) : m[2] !== undefined ? parseInt(m[2], 16) : 0x2f;
      // Only a single byte's character stands for a secret's (secrets are searched as bytes).
      if (code > 0xff) continue;
      decoded += text.slice(done, m.index);
      at.push(decoded.length);
      from.push(m.index);
      length.push(m[0].length);
      decoded += String.fromCharCode(code);
      done = m.index + m[0].length;
    }
  }
  if (at.length === 0) return { decoded: text, start: (i) => i, end: (i) => i + 1, cutEscape };
  decoded += text.slice(done);
  /** The last escape decoded at or before decoded position i (-1: none). */
  const escapeAtOrBefore = (i: number): number => {
    let lo = 0;
    let hi = at.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (at[mid]! <= i) (found = mid), (lo = mid + 1);
      else hi = mid - 1;
    }
    return found;
  };
  const start = (i: number): number => {
    const k = escapeAtOrBefore(i);
    if (k === -1) return i;
    return at[k] === i ? from[k]! : from[k]! + length[k]! + (i - at[k]! - 1);
  };
  const end = (i: number): number => {
    const k = escapeAtOrBefore(i);
    return k !== -1 && at[k] === i ? from[k]! + length[k]! : start(i) + 1;
  };
  return { decoded, start, end, cutEscape };
}
