import type { EndMeta, RequestMeta } from './wire-log.js';

/**
 * The JSON of the frame metas the request path writes (request, response head, end), built as strings of
 * the same text JSON.stringify gives — key order included — without its generic walk. Every exchange writes
 * three metas, and JSON.stringify of them (the response head's header table in V8's slow dictionary mode)
 * was ~4 µs of the request path's ~20 µs over a pass-through; these cost a fraction of that. Fields this file
 * does not know (a meta read back from an older log and republished) go through JSON.stringify, so the text
 * is always exactly JSON.stringify's.
 */

/** A string JSON needs no escape for: printable ASCII but '"' and '\\'. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON text of a string. The test is cheaper than JSON.stringify's call for the short strings metas hold. */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** JSON text of a value whose fields are strings (a meta's identity). */
function stringFields(o: Record<string, unknown>): string {
  let out = '';
  for (const k in o) {
    const v = o[k];
    const text = typeof v === 'string' ? jsonString(v) : (JSON.stringify(v) as string | undefined);
    if (text === undefined) continue; // what JSON.stringify leaves out (undefined, a function)
    out += `${out ? ',' : ''}${jsonString(k)}:${text}`;
  }
  return `{${out}}`;
}

/** JSON text of a request frame's meta: JSON.stringify(meta), field by field in the meta's own order. */
export function requestMetaJson(meta: RequestMeta): string {
  const m = meta as unknown as Record<string, unknown>;
  let out = '';
  for (const k in m) {
    const v = m[k];
    let text: string | undefined;
    switch (k) {
      case 'seq':
      case 'started_at':
        text = typeof v === 'number' && Number.isFinite(v) ? String(v) : JSON.stringify(v);
        break;
      case 'identity':
        text = typeof v === 'object' && v !== null && !Array.isArray(v) ? stringFields(v as Record<string, unknown>) : JSON.stringify(v);
        break;
      case 'dropped':
        text = Array.isArray(v) && v.every((x) => typeof x === 'string') ? `[${(v as string[]).map(jsonString).join(',')}]` : JSON.stringify(v);
        break;
      case 'delta': {
        const d = v as RequestMeta['delta'] & object;
        text =
          Object.keys(d).length === 3 && typeof d.base === 'string' && Number.isInteger(d.prefix) && Number.isInteger(d.suffix)
            ? `{"base":${jsonString(d.base)},"prefix":${d.prefix},"suffix":${d.suffix}}`
            : JSON.stringify(d);
        break;
      }
      default:
        text = typeof v === 'string' ? jsonString(v) : JSON.stringify(v);
    }
    if (text === undefined) continue; // what JSON.stringify leaves out (undefined, a function)
    out += `${out ? ',' : ''}${jsonString(k)}:${text}`;
  }
  return `{${out}}`;
}

/** JSON text of an end frame's meta (EndMeta's fields, in its declared order). */
export function endMetaJson(end: EndMeta): string {
  const error = end.upstream_error === null ? 'null' : jsonString(end.upstream_error);
  const errors = end.errors.length === 0 ? '[]' : JSON.stringify(end.errors);
  return `{"first_byte_at":${end.first_byte_at},"ended_at":${end.ended_at},"upstream_ended":${end.upstream_ended},"client_aborted":${end.client_aborted},"upstream_error":${error},"errors":${errors}}`;
}
