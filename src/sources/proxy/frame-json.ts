import type { EndMeta, RequestMeta } from './wire-format.js';

/**
 * How the frame metas the request path writes (request, response head, end) are spelled: the text
 * JSON.stringify gives, key order included, written piece by piece into a `JsonOut` — the wire log writes the
 * pieces straight into its slab. Every exchange writes three metas. JSON.stringify of them (the response head's
 * header table in V8's slow dictionary mode) and then the header line built around it as a string, flattened and
 * UTF-8 encoded into the slab, were ~5 µs of the ~20 µs the request path costs over a pass-through; printable
 * ASCII copied byte by byte costs a fraction of that. Fields this file does not know (a meta read back from an
 * older log and republished) and strings that need escapes go through JSON.stringify, so the text is always
 * exactly JSON.stringify's.
 */
export interface JsonOut {
  /** Text the caller vouches is printable ASCII needing no escape: constants, keys, call ids. */
  ascii(text: string): void;
  /** A JSON string value: copied as it is when it needs no escape, else JSON.stringify(s) in UTF-8. */
  string(s: string): void;
  /** JSON text as it is (from JSON.stringify). */
  json(text: string): void;
  /** A number as JSON.stringify spells it (the slab writer spells safe integers digit by digit, without a string). */
  number(n: number): void;
}

/** A JSON number as JSON.stringify spells it (non-finite numbers are null). */
export function numberText(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** A value JSON.stringify keeps (not undefined, a function or a symbol: `fields` skips those) as it spells it. */
function value(out: JsonOut, v: unknown): void {
  if (typeof v === 'string') out.string(v);
  else if (typeof v === 'number') out.number(v);
  else out.json(JSON.stringify(v));
}

/** The separator and key of each field the proxy writes as one constant text: [as the first field, as a later one]. */
const REQUEST_KEY_TEXT = new Map<string, readonly [string, string]>(
  ['seq', 'transport', 'protocol', 'method', 'path', 'upstream_path', 'started_at', 'identity', 'dropped', 'delta'].map((k) => [k, [`{"${k}":`, `,"${k}":`]]),
);

/**
 * JSON.stringify(meta) of a request frame's meta: its own fields in its own order (as JSON.stringify walks them,
 * fields it leaves out skipped), the ones the proxy writes spelled without a string built for them — keys as constant
 * text, numbers digit by digit, strings copied when they need no escape — and any other field as JSON.stringify has it.
 */
export function writeRequestMeta(out: JsonOut, meta: RequestMeta): void {
  const f = meta as unknown as Record<string, unknown>;
  let first = true;
  for (const k in f) {
    const v = f[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    const key = REQUEST_KEY_TEXT.get(k);
    if (key === undefined) {
      out.ascii(first ? '{' : ',');
      out.string(k);
      out.ascii(':');
      value(out, v);
    } else {
      out.ascii(first ? key[0] : key[1]);
      if (k === 'identity' && typeof v === 'object' && v !== null && !Array.isArray(v)) plainObject(out, v as Record<string, unknown>);
      else if (k === 'dropped' && Array.isArray(v) && v.every((x) => typeof x === 'string')) stringArray(out, v as string[]);
      else if (k === 'delta' && isPlainDelta(v)) {
        out.ascii('{"base":');
        out.string(v.base);
        out.ascii(',"prefix":');
        out.number(v.prefix);
        out.ascii(',"suffix":');
        out.number(v.suffix);
        out.ascii('}');
      } else value(out, v);
    }
    first = false;
  }
  out.ascii(first ? '{}' : '}');
}

/** `["a","b",…]`. */
function stringArray(out: JsonOut, v: readonly string[]): void {
  if (v.length === 0) return out.ascii('[]');
  out.ascii('[');
  for (let i = 0; i < v.length; i++) {
    if (i > 0) out.ascii(',');
    out.string(v[i]!);
  }
  out.ascii(']');
}

/** `{"k":v,…}` of a flat object (the identity headers), each value as `value` spells it. */
function plainObject(out: JsonOut, o: Record<string, unknown>): void {
  let first = true;
  for (const k in o) {
    const v = o[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out.ascii(first ? '{' : ',');
    first = false;
    out.string(k);
    out.ascii(':');
    value(out, v);
  }
  out.ascii(first ? '{}' : '}');
}

/** A delta as the proxy makes it: base, prefix, suffix and nothing else, in that order (the order it is spelled in). */
function isPlainDelta(v: unknown): v is NonNullable<RequestMeta['delta']> {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  const keys = Object.keys(d);
  return keys.length === 3 && keys[0] === 'base' && keys[1] === 'prefix' && keys[2] === 'suffix' && typeof d.base === 'string' && Number.isSafeInteger(d.prefix) && Number.isSafeInteger(d.suffix);
}

/** JSON.stringify(end) of an end frame's meta (EndMeta's fields, in its declared order). */
export function writeEndMeta(out: JsonOut, end: EndMeta): void {
  out.ascii('{"first_byte_at":');
  if (end.first_byte_at === null) out.ascii('null');
  else out.number(end.first_byte_at);
  out.ascii(',"ended_at":');
  out.number(end.ended_at);
  out.ascii(end.upstream_ended === true ? ',"upstream_ended":true' : ',"upstream_ended":false');
  out.ascii(end.client_aborted === true ? ',"client_aborted":true,"upstream_error":' : ',"client_aborted":false,"upstream_error":');
  // The usual end (no error): one constant text.
  if (end.upstream_error === null && end.errors.length === 0) return out.ascii('null,"errors":[]}');
  if (end.upstream_error === null) out.ascii('null');
  else out.string(end.upstream_error);
  out.ascii(',"errors":');
  if (end.errors.length === 0) out.ascii('[]');
  else out.json(JSON.stringify(end.errors));
  out.ascii('}');
}

/**
 * A response head's meta (ResponseHeadMeta): the status and the recorded headers, name, value, name, value, …
 * (names unique, in lower case), or — when a name repeated — the JSON of the whole meta, built the slow way.
 */
export type RecordedResponseHead = { pairs: readonly string[]; json?: undefined } | { pairs?: undefined; json: string };

export function writeResponseHeadMeta(out: JsonOut, status: number, head: RecordedResponseHead): void {
  if (head.json !== undefined) return out.json(head.json);
  out.ascii(`{"status":`);
  out.number(status);
  out.ascii(',"headers":{');
  const pairs = head.pairs;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    if (i > 0) out.ascii(',');
    out.string(pairs[i]!);
    out.ascii(':');
    out.string(pairs[i + 1]!);
  }
  out.ascii('}}');
}

/** A JsonOut into a string, strings through JSON.stringify: the reference the tests hold the slab writer to. */
export function jsonText(write: (out: JsonOut) => void): string {
  let text = '';
  write({
    ascii: (s) => (text += s),
    string: (s) => (text += JSON.stringify(s)),
    json: (s) => (text += s),
    number: (n) => (text += numberText(n)),
  });
  return text;
}
