import type { EndMeta, RequestMeta } from './wire-log.js';

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
}

/** A JSON number as JSON.stringify spells it (non-finite numbers are null). */
function numberText(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

function number(out: JsonOut, n: number): void {
  out.ascii(numberText(n));
}

/** A value JSON.stringify keeps (not undefined, a function or a symbol: `fields` skips those) as it spells it. */
function value(out: JsonOut, v: unknown): void {
  if (typeof v === 'string') out.string(v);
  else if (typeof v === 'number') number(out, v);
  else out.json(JSON.stringify(v));
}

/**
 * `{"k":v,…}` over an object's own fields in its order, as JSON.stringify walks them (fields it leaves out skipped);
 * `write` spells each value.
 */
function fields(out: JsonOut, o: object, write: (k: string, v: unknown) => void): void {
  const f = o as Record<string, unknown>;
  out.ascii('{');
  let first = true;
  for (const k in f) {
    const v = f[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) out.ascii(',');
    first = false;
    out.string(k);
    out.ascii(':');
    write(k, v);
  }
  out.ascii('}');
}

/** JSON.stringify(meta) of a request frame's meta, field by field in the meta's own order. */
export function writeRequestMeta(out: JsonOut, meta: RequestMeta): void {
  fields(out, meta, (k, v) => {
    if (k === 'identity' && typeof v === 'object' && v !== null && !Array.isArray(v)) fields(out, v, (_, x) => value(out, x));
    else if (k === 'dropped' && Array.isArray(v) && v.every((x) => typeof x === 'string')) {
      out.ascii('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) out.ascii(',');
        out.string(v[i] as string);
      }
      out.ascii(']');
    } else if (k === 'delta' && isPlainDelta(v)) {
      out.ascii('{"base":');
      out.string(v.base);
      out.ascii(`,"prefix":${v.prefix},"suffix":${v.suffix}}`);
    } else value(out, v);
  });
}

function isPlainDelta(v: unknown): v is NonNullable<RequestMeta['delta']> {
  const d = v as Record<string, unknown>;
  return typeof v === 'object' && v !== null && Object.keys(d).length === 3 && typeof d.base === 'string' && Number.isSafeInteger(d.prefix) && Number.isSafeInteger(d.suffix);
}

/** JSON.stringify(end) of an end frame's meta (EndMeta's fields, in its declared order). */
export function writeEndMeta(out: JsonOut, end: EndMeta): void {
  const firstByte = end.first_byte_at === null ? 'null' : numberText(end.first_byte_at);
  const head = `{"first_byte_at":${firstByte},"ended_at":${numberText(end.ended_at)},"upstream_ended":${end.upstream_ended === true},"client_aborted":${end.client_aborted === true},"upstream_error":`;
  // The usual end (no error) is one text.
  if (end.upstream_error === null && end.errors.length === 0) return out.ascii(`${head}null,"errors":[]}`);
  out.ascii(head);
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
  number(out, status);
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
  });
  return text;
}
