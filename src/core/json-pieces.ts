/**
 * JSON.stringify(value, null, indent), as a sequence of strings whose concatenation is exactly that text.
 *
 * Why: one JSON.stringify of a trace document is one multi-megabyte string — as soon as a single character
 * is outside Latin-1 (a '…' in a tool result) a two-byte one, twice the size — and writing it meant
 * flattening and encoding it into a fresh buffer of its own (fresh memory: see scratch-buffers.ts). Pieces of a
 * few kilobytes live and die in the young generation and are encoded into a reused buffer.
 *
 * The containers down to `splitDepth` are walked here, with JSON.stringify's own rules (toJSON called with
 * the property's key, properties whose value serializes to nothing left out, such array elements written as
 * null, `{}` / `[]` when empty); below it every value is JSON.stringify'd whole and re-indented (a raw newline
 * occurs in JSON text only between tokens, so prefixing each one moves the whole subtree right). One
 * difference, for a case roller never produces: when a toJSON returns an object that has a toJSON of its
 * own below the split depth, JSON.stringify applies only the first and this applies both.
 */
export function* jsonPieces(value: unknown, indent: number = 2, splitDepth = 2): Generator<string> {
  const gap = ' '.repeat(Math.max(0, Math.min(10, Math.floor(indent))));
  if (!(yield* piecesOf(resolve(value, ''), gap, '', splitDepth))) {
    throw new TypeError('jsonPieces: the value serializes to nothing (undefined, a function or a symbol)');
  }
}

/** Yields the text of an already resolved value at indentation `at`; false when it has none. */
function* piecesOf(value: unknown, gap: string, at: string, depth: number): Generator<string, boolean> {
  if (depth > 0 && value !== null && typeof value === 'object' && isPlainContainer(value)) {
    if (Array.isArray(value)) yield* arrayPieces(value, gap, at, depth);
    else yield* objectPieces(value as Record<string, unknown>, gap, at, depth);
    return true;
  }
  const text = JSON.stringify(value, null, gap) as string | undefined;
  if (text === undefined) return false;
  yield at !== '' && gap !== '' && text.includes('\n') ? text.replaceAll('\n', `\n${at}`) : text;
  return true;
}

function* arrayPieces(values: unknown[], gap: string, at: string, depth: number): Generator<string> {
  if (values.length === 0) {
    yield '[]';
    return;
  }
  const inner = at + gap;
  const open = gap === '' ? '[' : `[\n${inner}`;
  const sep = gap === '' ? ',' : `,\n${inner}`;
  for (let i = 0; i < values.length; i++) {
    yield i === 0 ? open : sep;
    // An element that serializes to nothing is null, as in JSON.stringify.
    if (!(yield* piecesOf(resolve(values[i], String(i)), gap, inner, depth - 1))) yield 'null';
  }
  yield gap === '' ? ']' : `\n${at}]`;
}

function* objectPieces(object: Record<string, unknown>, gap: string, at: string, depth: number): Generator<string> {
  const inner = at + gap;
  const colon = gap === '' ? ':' : ': ';
  let first = true;
  for (const key of Object.keys(object)) {
    // Whether it serializes must be known before its key is written: undefined, a function or a symbol
    // (after toJSON, which may turn anything into anything) is left out.
    const v = resolve(object[key], key);
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    yield `${first ? (gap === '' ? '{' : `{\n${inner}`) : gap === '' ? ',' : `,\n${inner}`}${JSON.stringify(key)}${colon}`;
    first = false;
    yield* piecesOf(v, gap, inner, depth - 1);
  }
  yield first ? '{}' : gap === '' ? '}' : `\n${at}}`;
}

/** JSON.stringify's first step for a value found under `key`: its toJSON(key), when it has one. */
function resolve(value: unknown, key: string): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  return value;
}

/** Arrays and objects of the plain kind are walked here; anything else (a Map, a boxed value, a class instance) is JSON.stringify's. */
function isPlainContainer(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
