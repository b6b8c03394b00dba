import { ErrorCode, RollerError } from '../core/errors.js';
import type { Call } from './call.js';

const CLOSE_LINE = Buffer.from('}\n');

const RAW_CONTEXT_BYTES = Symbol('roller.rawContextBytes');

/**
 * A call whose request context stays bytes — one line of JSON, valid UTF-8 — until something reads
 * `call.context` (then it is parsed once): a call read back from a calls.jsonl, or projected from the wire
 * log. Writers splice the bytes into their lines instead of re-serializing the value: cheaper (a 20 KB body is
 * neither parsed for nothing nor stringified per sink; most calls of a sample are never parsed at all) and truer
 * (the bytes the model got: number spelling, key order and all). `where` names the line for the error a
 * corrupt context gives when it is finally parsed.
 */
export function withLazyContext<T extends object>(call: T, bytes: Buffer, where: string): T {
  let parsed: { value: unknown } | undefined;
  Object.defineProperty(call, 'context', {
    enumerable: true,
    configurable: true,
    get() {
      if (!parsed) {
        try {
          parsed = { value: JSON.parse(bytes.toString('utf8')) as unknown };
        } catch (err) {
          throw new RollerError(ErrorCode.JSONL_INVALID_JSON, `${where}: the request context is not valid JSON (${(err as Error).message})`);
        }
      }
      return parsed.value;
    },
    set(this: object, value: unknown) {
      // A new context replaces the bytes on the object it is set on (a copy by withCallFields has its own).
      Object.defineProperty(this, 'context', { value, enumerable: true, writable: true, configurable: true });
      delete (this as { [RAW_CONTEXT_BYTES]?: Buffer })[RAW_CONTEXT_BYTES];
    },
  });
  Object.defineProperty(call, RAW_CONTEXT_BYTES, { value: bytes, enumerable: false, configurable: true });
  return call;
}

/** The context's bytes of a call read lazily (withLazyContext), while they are what the call holds. */
export function rawContextBytesOf(call: object): Buffer | undefined {
  return (call as { [RAW_CONTEXT_BYTES]?: Buffer })[RAW_CONTEXT_BYTES];
}

/** Whether the call holds a request context (not null), without parsing a lazy one. */
export function hasContext(call: { context?: unknown }): boolean {
  const bytes = rawContextBytesOf(call);
  if (bytes) return !(bytes.length === 4 && bytes.toString('latin1') === 'null');
  return call.context !== null && call.context !== undefined;
}

/**
 * Whether the request asked the model to generate. `"generate": false` is a parameter of the OpenAI Responses
 * API only (Codex's warm-up requests send it); in another protocol's body it asks nothing of the model, so
 * those calls generate, and their bytes are not searched (the search was ~6% of a reprocess). A lazy
 * context is parsed only when its bytes hold that literal — inside a JSON string a quote is always escaped,
 * so the bytes hold it only where the body has such a key.
 */
export function generatesOutput(call: { protocol?: string; context?: unknown }): boolean {
  if (call.protocol !== 'openai-responses') return true;
  const bytes = rawContextBytesOf(call);
  if (bytes && bytes.indexOf('"generate":false') === -1) return true;
  return (call.context as { generate?: unknown } | null)?.generate !== false;
}

/** A call's fields other than its context, without reading (and so parsing) a lazy context. */
export function fieldsOf(call: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(call)) if (k !== 'context') out[k] = (call as Record<string, unknown>)[k];
  return out;
}

/**
 * One JSONL line for a call: metadata first, the context (spliced raw when possible) last.
 * `extra` fields are added before the context (wire-trace heads).
 */
export function encodeWithContext(call: Call, fields: object, contextKey: string): Buffer | Buffer[] {
  const bytes = rawContextBytesOf(call);
  if (bytes) {
    // Pieces, not one buffer: the context's bytes go to the file as they were read.
    const head = JSON.stringify(fields);
    return [Buffer.from(`${head.length > 2 ? `${head.slice(0, -1)},` : '{'}${JSON.stringify(contextKey)}:`, 'utf8'), bytes, CLOSE_LINE];
  }
  const head = JSON.stringify(fields);
  const context = JSON.stringify(call.context ?? null);
  const open = head.length > 2 ? `${head.slice(0, -1)},` : '{';
  return Buffer.from(`${open}${JSON.stringify(contextKey)}:${context}}\n`, 'utf8');
}

/**
 * `{ ...call, ...patch }` that keeps the raw context text: a spread copies only enumerable fields, and the
 * record would otherwise be written with its context re-serialized instead of as it was sent.
 */
export function withCallFields<T extends object>(call: T, patch: Partial<T>): T {
  // Property descriptors, not a spread: a lazy context is carried over unparsed.
  const next = Object.defineProperties({}, Object.getOwnPropertyDescriptors(call)) as T;
  Object.assign(next, patch);
  return next;
}
