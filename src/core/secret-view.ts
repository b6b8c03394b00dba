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
  if (!text.includes('\\') && !text.includes('%')) return { decoded: text, start: (i) => i, end: (i) => i + 1, cutEscape };
  const starts: number[] = [];
  const ends: number[] = [];
  let decoded = '';
  let at = 0;
  const plain = (to: number) => {
    for (let i = at; i < to; i++) starts.push(i), ends.push(i + 1);
    decoded += text.slice(at, to);
  };
  for (const m of text.matchAll(ESCAPE)) {
    const code = m[1] !== undefined ? parseInt(m[1], 16) : m[2] !== undefined ? parseInt(m[2], 16) : 0x2f;
    // Only a single byte's character stands for a secret's (secrets are searched as bytes).
    if (code > 0xff) continue;
    plain(m.index);
    decoded += String.fromCharCode(code);
    starts.push(m.index);
    ends.push(m.index + m[0].length);
    at = m.index + m[0].length;
  }
  plain(text.length);
  return { decoded, start: (i) => starts[i]!, end: (i) => ends[i]!, cutEscape };
}
