import { ErrorCode, RollerError } from './errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The bytes of a JSON document without the whitespace between its tokens, plus a final '\n' when asked:
 * for a document written by JSON.stringify(value, null, indent) — every roller JSON file — exactly
 * JSON.stringify(value), without parsing it (strings are copied as they are, so their escapes stay JSON.stringify's).
 * The run-level sft.jsonl took every sample's trace_SFT.json through JSON.parse + JSON.stringify: ~12% of a
 * reprocess worker's CPU, for bytes that only lose their indentation.
 */
export function compactJson(src: Buffer, options: { newline?: boolean; origin?: string } = {}): Buffer {
  const out = Buffer.allocUnsafe(src.length + 1);
  let o = 0;
  let i = 0;
  const n = src.length;
  while (i < n) {
    const b = src[i]!;
    if (b === QUOTE) {
      // A string: copy through its closing quote (one preceded by an even number of backslashes).
      let end = i + 1;
      for (;;) {
        const q = src.indexOf(QUOTE, end);
        if (q === -1) throw new RollerError(ErrorCode.JSON_INVALID, `${options.origin ?? 'a JSON document'}: a string opened at byte ${i} never closes; the file is cut or not JSON`);
        let backslashes = 0;
        while (src[q - 1 - backslashes] === BACKSLASH) backslashes++;
        end = q + 1;
        if (backslashes % 2 === 0) break;
      }
      o += src.copy(out, o, i, end);
      i = end;
    } else {
      // Outside strings JSON allows exactly these four whitespace bytes.
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) out[o++] = b;
      i++;
    }
  }
  if (options.newline) out[o++] = 0x0a;
  return out.subarray(0, o);
}
