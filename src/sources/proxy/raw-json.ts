import type { Call } from '../../schemas/call.js';

/**
 * The request body exactly as sent (decoded, already checked to be JSON), carried beside the parsed
 * context. Writers splice it into the output instead of re-serializing the parsed value: cheaper (a
 * 20 KB body is not stringified again per sink) and truer (the bytes the model got, number spelling,
 * key order and all). Non-enumerable, so it never shows up as a field.
 */
const RAW_CONTEXT = Symbol('roller.rawContext');

export function attachRawContext<T extends object>(call: T, text: string): T {
  Object.defineProperty(call, RAW_CONTEXT, { value: text, enumerable: false });
  return call;
}

/** The raw text, when it can be spliced into a JSONL line (a single line of JSON). */
export function rawContextOf(call: object): string | undefined {
  const text = (call as { [RAW_CONTEXT]?: string })[RAW_CONTEXT];
  if (text === undefined || text.includes('\n') || text.includes('\r')) return undefined;
  return text;
}

/**
 * One JSONL line for a call: metadata first, the context (spliced raw when possible) last.
 * `extra` fields are added before the context (wire-trace heads).
 */
export function encodeWithContext(call: Call, fields: object, contextKey: string): Buffer {
  const raw = rawContextOf(call);
  const head = JSON.stringify(fields);
  const context = raw ?? JSON.stringify(call.context ?? null);
  const open = head.length > 2 ? `${head.slice(0, -1)},` : '{';
  return Buffer.from(`${open}${JSON.stringify(contextKey)}:${context}}\n`, 'utf8');
}

/**
 * `{ ...call, ...patch }` that keeps the raw context text: a spread copies only enumerable fields, and the
 * record would otherwise be written with its context re-serialized instead of as it was sent.
 */
export function withCallFields<T extends object>(call: T, patch: Partial<T>): T {
  const next = { ...call, ...patch };
  const raw = (call as { [RAW_CONTEXT]?: string })[RAW_CONTEXT];
  return raw === undefined ? next : attachRawContext(next, raw);
}
