import { isObject } from '../../transforms/protocols/types.js';

/** A `type` longer than this is no event type (and is not turned into a string to learn that). */
const MAX_TYPE_BYTES = 4096;

/**
 * The `type` a JSON object declares: where a Responses request begins (response.create) and a response ends. A text
 * that is not a JSON object, or whose `type` is not a string, has none (''). Parsed whole: for a message held whole.
 */
export function eventType(buf: Buffer): string {
  // Not a JSON object (its first byte past whitespace): no type, and no megabytes turned into a string to learn it.
  if (buf[skipSpace(buf, 0)] !== 0x7b) return '';
  try {
    const event: unknown = JSON.parse(buf.toString('utf8'));
    return isObject(event) && typeof event.type === 'string' ? event.type : '';
  } catch {
    return '';
  }
}

/**
 * The `type` the first bytes of a JSON object declare, read without parsing the rest: for a message too large to hold
 * whole before it is forwarded. Walks the top-level members in `buf` (a value is skipped, strings and nesting
 * respected) and returns the last `type` among those complete in it; on a whole document it agrees with eventType
 * (the differential tests hold it to JSON.parse). Stops at the first byte that is not JSON, with what it found.
 */
export function leadingType(buf: Buffer): string {
  let i = skipSpace(buf, 0);
  if (buf[i] !== 0x7b) return '';
  let type = '';
  i++;
  for (;;) {
    i = skipSpace(buf, i);
    if (buf[i] !== 0x22) return type; // '}', the end of what is here, or not JSON
    const keyEnd = stringEnd(buf, i);
    if (keyEnd < 0) return type;
    const isType = keyEnd - i + 1 <= 64 && decodeString(buf, i, keyEnd) === 'type';
    i = skipSpace(buf, keyEnd + 1);
    if (buf[i] !== 0x3a) return type;
    i = skipSpace(buf, i + 1);
    if (i >= buf.length) return type;
    const isString = buf[i] === 0x22;
    const valueEnd = isString ? stringEnd(buf, i) : valueEndOf(buf, i);
    if (valueEnd < 0) return type;
    if (isType) type = isString && valueEnd - i + 1 <= MAX_TYPE_BYTES ? (decodeString(buf, i, valueEnd) ?? '') : '';
    i = skipSpace(buf, valueEnd + 1);
    if (buf[i] !== 0x2c) return type;
    i++;
  }
}

function skipSpace(buf: Buffer, i: number): number {
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  return i;
}

/** The index of the quote that closes the string opening at `start` (-1: not in `buf`). */
function stringEnd(buf: Buffer, start: number): number {
  let j = start + 1;
  for (;;) {
    j = buf.indexOf(0x22, j);
    if (j < 0) return -1;
    let slashes = 0;
    while (buf[j - 1 - slashes] === 0x5c) slashes++;
    if (slashes % 2 === 0) return j;
    j++;
  }
}

/** The index of the last byte of the non-string value at `start` (-1: it does not end in `buf`). */
function valueEndOf(buf: Buffer, start: number): number {
  const first = buf[start];
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the byte that ends it.
    let j = start;
    while (j < buf.length && buf[j] !== 0x2c && buf[j] !== 0x7d && buf[j] !== 0x5d && buf[j] !== 0x20 && buf[j] !== 0x0a && buf[j] !== 0x0d && buf[j] !== 0x09) j++;
    return j < buf.length ? j - 1 : -1;
  }
  let depth = 0;
  for (let j = start; j < buf.length; j++) {
    const b = buf[j];
    if (b === 0x22) {
      j = stringEnd(buf, j);
      if (j < 0) return -1;
    } else if (b === 0x7b || b === 0x5b) depth++;
    else if ((b === 0x7d || b === 0x5d) && --depth === 0) return j;
  }
  return -1;
}

/** The string token from `start` to `end` (its quotes) decoded; undefined when it is not a JSON string. */
function decodeString(buf: Buffer, start: number, end: number): string | undefined {
  const raw = buf.toString('utf8', start, end + 1);
  if (!raw.includes('\\')) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return undefined;
  }
}
