import { abortableInput } from './abort.js';
import { writeJsonAtomic, type WrittenFile } from './atomic-write.js';
import type { OpenOutput } from './output.js';
import type { Sink, SinkReport, StageContext } from './stage.js';

export interface DocumentSinkOptions<T> {
  name: string;
  /** Where each item goes (a document per file: the same path again replaces it, atomically). */
  path(item: T, index: number): string;
  /** The JSON document of an item (default: the item itself), written indented with a trailing newline. */
  document?(item: T): unknown;
  open?: OpenOutput;
}

/**
 * A sink of documents, each written to its own file atomically (a temporary file beside it, renamed into place:
 * a reader sees the old file or the new one, never half of one), with its sha256 in the report. The write path is
 * writeFileAtomic's, the one every roller file takes.
 */
export function createDocumentSink<T>(options: DocumentSinkOptions<T>): Sink<T> {
  const { name } = options;
  return {
    name,
    async consume(input: AsyncIterable<T>, ctx: StageContext): Promise<SinkReport> {
      const files: Record<string, { sha256: string; bytes: number }> = {};
      let received = 0;
      let bytes = 0;
      const write = { signal: ctx.signal, ...(options.open ? { open: options.open } : {}) };
      for await (const item of abortableInput(input, ctx.signal)) {
        const path = options.path(item, received++);
        const file: WrittenFile = await writeJsonAtomic(path, options.document ? options.document(item) : item, write);
        files[path] = { sha256: file.sha256, bytes: file.bytes };
        bytes += file.bytes;
      }
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', received);
      return { name, received, written: received, bytes, files };
    },
  };
}

/** Items as an async iterable: what a sink takes, for a caller holding one document or a few. */
export async function* itemsOf<T>(...items: T[]): AsyncIterable<T> {
  yield* items;
}
