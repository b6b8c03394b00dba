import { createReadStream } from 'node:fs';
import { throwIfAborted } from './abort.js';
import { ErrorCode, RollerError, type Origin } from './errors.js';
import { LineSplitter, type LineSink } from './line-splitter.js';
import { excerpt } from './rejected.js';
import type { Envelope, Source, StageContext } from './stage.js';

export interface JsonlSourceOptions {
  /** A line longer than this is an error (or a rejection). Default 64 MiB. */
  maxLineBytes?: number;
  /**
   * 'throw' (default): the first bad line ends the stream with a typed error naming file and line;
   * records before it have been delivered. 'reject': bad lines go to ctx.reject and reading goes on.
   */
  onBadLine?: 'throw' | 'reject';
  /** Read size; larger chunks mean fewer awaits. Default 1 MiB. */
  chunkBytes?: number;
  /** Name used in errors and origins when reading from chunks rather than a path. */
  name?: string;
}

export const DEFAULT_MAX_LINE_BYTES = 64 << 20;
const STAGE = 'jsonl-source';

function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * Parsed JSONL records from a byte stream, as envelopes carrying file, line and byte offset.
 * Blank lines are skipped. A last line without '\n' that parses is a record; one that does not is
 * reported as truncated (ROLLER_JSONL_TRUNCATED_LINE), after every earlier record was delivered.
 */
export async function* jsonlEnvelopes(
  chunks: AsyncIterable<Buffer | Uint8Array | string>,
  ctx: StageContext,
  options: JsonlSourceOptions = {},
): AsyncGenerator<Envelope<unknown>> {
  const file = options.name ?? '<stream>';
  const splitter = new LineSplitter(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  const mode = options.onBadLine ?? 'throw';
  let ready: Envelope<unknown>[] = [];
  let failure: RollerError | undefined;
  let received = 0;
  let emitted = 0;

  const bad = (code: ErrorCode, message: string, origin: Origin, raw?: string): void => {
    if (mode === 'throw') {
      failure ??= new RollerError(code, message, { origin });
      return;
    }
    ctx.reject({ stage: STAGE, code, reason: message, origin, ...(raw === undefined ? {} : { excerpt: excerpt(raw) }) });
  };

  const sink: LineSink = {
    line(buf, start, end, line, offset) {
      if (failure || isBlank(buf, start, end)) return;
      received++;
      const text = buf.toString('utf8', start, end);
      try {
        ready.push({ seq: line, origin: { file, line, offset }, data: JSON.parse(text) });
      } catch (err) {
        bad(
          ErrorCode.JSONL_INVALID_JSON,
          `${file}:${line}: not valid JSON (${(err as Error).message}); fix or remove that line, or read with onBadLine 'reject'`,
          { file, line, offset },
          text,
        );
      }
    },
    oversize(line, offset, bytes) {
      if (failure) return;
      received++;
      bad(
        ErrorCode.JSONL_LINE_TOO_LONG,
        `${file}:${line}: line exceeds maxLineBytes (${bytes} bytes so far); raise maxLineBytes if such records are expected`,
        { file, line, offset },
      );
    },
  };

  try {
    for await (const chunk of chunks) {
      throwIfAborted(ctx.signal);
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), sink);
      if (ready.length > 0) {
        const batch = ready;
        ready = [];
        for (const env of batch) {
          emitted++;
          yield env;
        }
      }
      if (failure) throw failure;
    }
    const tail = splitter.finish();
    if (tail && !isBlank(tail.buf, 0, tail.buf.length)) {
      const text = tail.buf.toString('utf8');
      received++;
      try {
        const data: unknown = JSON.parse(text);
        emitted++;
        yield { seq: tail.lineNo, origin: { file, line: tail.lineNo, offset: tail.offset }, data };
      } catch {
        bad(
          ErrorCode.JSONL_TRUNCATED_LINE,
          `${file}:${tail.lineNo}: last line is incomplete (${tail.buf.length} bytes, no newline, not valid JSON); ` +
            `the writer probably stopped mid-record. The ${emitted} records before it were delivered`,
          { file, line: tail.lineNo, offset: tail.offset },
          text,
        );
        if (failure) throw failure;
      }
    }
  } finally {
    ctx.counters.add(STAGE, 'received', received);
    ctx.counters.add(STAGE, 'emitted', emitted);
  }
}

export function readFileChunks(path: string, chunkBytes = 1 << 20): AsyncIterable<Buffer> {
  return createReadStream(path, { highWaterMark: chunkBytes });
}

/** Source of envelopes from a JSONL file. */
export function jsonlFileSource(path: string, options: JsonlSourceOptions = {}): Source<Envelope<unknown>> {
  return (ctx) => jsonlEnvelopes(readFileChunks(path, options.chunkBytes), ctx, { ...options, name: options.name ?? path });
}

/** Source of the parsed values of a JSONL file (the envelope dropped). */
export function jsonlValueSource<T = unknown>(path: string, options: JsonlSourceOptions = {}): Source<T> {
  return async function* values(ctx) {
    for await (const env of jsonlFileSource(path, options)(ctx)) yield env.data as T;
  };
}

