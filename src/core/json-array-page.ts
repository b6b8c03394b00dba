import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import Assembler from 'stream-json/assembler.js';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { ErrorCode, RollerError } from './errors.js';

export interface ArrayPage {
  /** The document's other top-level members read so far (all of them when `total` is known). */
  head: Record<string, unknown>;
  /** Elements offset .. offset+limit-1 of the array. */
  items: unknown[];
  /** Whether an element follows the page. */
  more: boolean;
  /** The array's length, when the read reached its end (it stops one element past the page otherwise). */
  total: number | null;
  /** Whether the document has the member at all. */
  found: boolean;
}

interface Token {
  name: string;
  value?: unknown;
}

const OPEN = new Set(['startObject', 'startArray']);
const CLOSE = new Set(['endObject', 'endArray']);

/**
 * One page of the array member `key` of a JSON document `{..., key: [...], ...}`, read as a token stream
 * (stream-json): only the page's elements and the other members are assembled, and the read stops one element
 * past the page unless `toEnd` (a 300 MB trace_ACTF.json is never parsed whole). A document that is not an object,
 * or bad JSON, is a typed error naming the file.
 */
export async function readArrayPage(path: string, key: string, offset: number, limit: number, options: { toEnd?: boolean } = {}): Promise<ArrayPage> {
  const tokens = createReadStream(path).pipe(parser.asStream({ packValues: true, streamValues: false }));
  const head = new Assembler();
  const items: unknown[] = [];
  let depth = 0;
  let rootKey: string | null = null;
  let inArray = false;
  let index = -1;
  let element: Assembler | null = null;
  let more = false;
  let total: number | null = null;
  let stopped = false;
  let found = false;
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      if (depth === 0 && token.name !== 'startObject') throw new RollerError(ErrorCode.JSON_INVALID, `${path}: not a JSON object (it starts with ${token.name})`);
      if (inArray) {
        if (depth === 2 && CLOSE.has(token.name)) {
          // the array ends
          inArray = false;
          depth--;
          total = index + 1;
          continue;
        }
        if (depth === 2) {
          index++;
          if (index >= offset + limit) {
            more = true;
            if (!options.toEnd) {
              stopped = true;
              break;
            }
          }
          if (index >= offset && index < offset + limit) element = new Assembler();
        }
        element?.consume(token as never);
        if (OPEN.has(token.name)) depth++;
        else if (CLOSE.has(token.name)) depth--;
        if (depth === 2 && element) {
          items.push(element.current);
          element = null;
        }
        continue;
      }
      if (depth === 1 && token.name === 'keyValue') rootKey = token.value as string;
      if (depth === 1 && rootKey === key && token.name === 'startArray') {
        // the head gets an empty array in its place (removed below)
        head.consume({ name: 'startArray' } as never).consume({ name: 'endArray' } as never);
        found = true;
        inArray = true;
        depth++;
        continue;
      }
      head.consume(token as never);
      if (OPEN.has(token.name)) depth++;
      else if (CLOSE.has(token.name)) depth--;
    }
  } catch (err) {
    if (err instanceof RollerError) throw err;
    throw new RollerError(ErrorCode.JSON_INVALID, `${path}: not valid JSON (${(err as Error).message})`);
  } finally {
    tokens.destroy();
  }
  if (!stopped && depth !== 0) throw new RollerError(ErrorCode.JSON_INVALID, `${path}: the JSON document is cut short`);
  // Stopped inside the array, the head's current value is still the root object.
  const root = { ...((head.current ?? {}) as Record<string, unknown>) };
  if (found) delete root[key];
  return { head: root, items, more, total: stopped ? null : found ? total : 0, found };
}

/**
 * Each element of the array member `key` of a JSON document `{..., key: [...], ...}`, one at a time in order: only the
 * element being read is assembled (stream-json's pick and streamArray), so a run's info.json of a million rows streams.
 * Bad JSON is a typed error naming the file.
 */
export async function* arrayMemberElements(path: string, key: string): AsyncGenerator<unknown> {
  // pipeline() destroys every stage when one fails, and the error reaches the iteration of the last.
  const elements = pipeline(createReadStream(path), parser.asStream({ packValues: true, streamValues: false }), pick.asStream({ filter: key, once: true }), streamArray.asStream(), () => {});
  try {
    for await (const { value } of elements as AsyncIterable<{ value: unknown }>) yield value;
  } catch (err) {
    if (err instanceof RollerError) throw err;
    throw new RollerError(ErrorCode.JSON_INVALID, `${path}: not valid JSON (${(err as Error).message})`);
  } finally {
    elements.destroy();
  }
}
