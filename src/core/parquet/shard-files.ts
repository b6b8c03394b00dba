import { once } from 'node:events';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { abortReason } from '../errors.js';

const pad = (n: number) => String(n).padStart(5, '0');

/** A shard's name while it is written (hidden: a reader of the directory never sees it half done). */
export const tempShardName = (dir: string, prefix: string, index: number) => join(dir, `.${prefix}-${pad(index)}.parquet`);

/** The written shards renamed for their place among all of them (`prefix-0000i-of-0000N.parquet`); their paths. */
export async function nameShards(dir: string, prefix: string, temps: readonly string[]): Promise<string[]> {
  const names: string[] = [];
  for (const [i, temp] of temps.entries()) {
    const name = join(dir, `${prefix}-${pad(i)}-of-${pad(temps.length)}.parquet`);
    await rename(temp, name);
    names.push(name);
  }
  return names;
}

/** After a failure: an open output destroyed (its late errors ignored) and its file removed. */
export async function discardOutput(out: Writable, path: string): Promise<void> {
  out.on('error', () => {});
  out.destroy();
  await rm(path, { force: true });
}

/** A chunk written to a shard, waiting for the disk when the stream asks; its error or the abort thrown (`failed` words an error). */
export async function writeWaiting(out: Writable, chunk: Buffer, signal: AbortSignal, lastError: () => Error | undefined, failed: (err: Error) => Error): Promise<void> {
  const more = out.write(chunk);
  const error = lastError();
  if (error) throw failed(error);
  if (more) return;
  try {
    await once(out, 'drain', { signal });
  } catch (err) {
    if (signal.aborted) throw abortReason(signal);
    throw failed(err as Error);
  }
}
