import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { abortableInput } from './abort.js';
import { EncodedLine, jsonlBytes } from './encoded-line.js';
import { ErrorCode, RollerError, abortReason } from './errors.js';
import { openFileOutput, type OpenOutput } from './output.js';
import { rename, rm } from './thread-fs.js';
import type { Sink, SinkReport, StageContext } from './stage.js';

export interface JsonlSinkOptions {
  path: string;
  /** Default: a file stream (parent directories created). */
  open?: OpenOutput;
  /** Compute the sha256 of the bytes while they are written. Default true. */
  sha256?: boolean;
  /** Written to a temporary file beside `path` and renamed into place only when complete (a reader never sees part of it). */
  atomic?: boolean;
  name?: string;
}

/**
 * Writes one JSON value per line. Drain-aware: when write() says the buffer is full it waits for
 * 'drain' (abortable), so a slow disk slows the pipeline instead of growing memory. Items that are
 * EncodedLine are written as they are (serialized once upstream).
 */
export function createJsonlSink<T = unknown>(options: JsonlSinkOptions): Sink<T> {
  const name = options.name ?? `jsonl:${options.path}`;
  const open = options.open ?? openFileOutput;
  const wantHash = options.sha256 ?? true;
  return {
    name,
    async consume(input: AsyncIterable<T>, ctx: StageContext): Promise<SinkReport> {
      const target = options.atomic ? `${options.path}.${process.pid}.tmp` : options.path;
      const out: Writable = await open(target);
      let streamError: Error | undefined;
      const onError = (err: Error) => (streamError ??= err);
      out.on('error', onError);
      const hash: Hash | undefined = wantHash ? createHash('sha256') : undefined;
      let received = 0;
      let bytes = 0;
      const fail = (cause: unknown): RollerError =>
        cause instanceof RollerError
          ? cause
          : new RollerError(
              ErrorCode.SINK_WRITE_FAILED,
              `${name}: writing ${options.path} failed after ${received} records (${(cause as Error).message}); check disk space and permissions`,
              { cause },
            );
      try {
        // abortable: a stuck or endless input gives way to the signal between items.
        for await (const item of abortableInput(input, ctx.signal)) {
          received++;
          let more = true;
          for (const line of item instanceof EncodedLine ? item.parts : [jsonlBytes(item)]) {
            hash?.update(line);
            bytes += line.length;
            more = out.write(line);
          }
          if (streamError) throw fail(streamError);
          if (!more) {
            try {
              await once(out, 'drain', { signal: ctx.signal });
            } catch (err) {
              if (ctx.signal.aborted) throw abortReason(ctx.signal);
              throw fail(err);
            }
          }
        }
        out.end();
        try {
          await finished(out);
        } catch (err) {
          throw fail(err);
        }
        if (streamError) throw fail(streamError);
        if (options.atomic) await rename(target, options.path);
        ctx.counters.add(name, 'received', received);
        ctx.counters.add(name, 'emitted', received);
        const digest = hash?.digest('hex');
        return {
          name,
          received,
          written: received,
          bytes,
          files: { [options.path]: digest === undefined ? { bytes } : { sha256: digest, bytes } },
        };
      } catch (err) {
        out.destroy();
        if (options.atomic) await rm(target, { force: true });
        throw err;
      } finally {
        out.off('error', onError);
        out.on('error', () => {}); // a late error from a destroyed stream must not crash the process
      }
    },
  };
}
