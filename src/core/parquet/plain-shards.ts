import { mkdir } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { abortReason, ErrorCode, RollerError } from '../errors.js';
import type { OpenOutput } from '../output.js';
import type { Columns } from './columns.js';
import { PlainParquetFile } from './plain-parquet.js';
import { discardOutput, nameShards, tempShardName, writeWaiting } from './shard-files.js';

/** A row group is written once its rows hold this many bytes of values (memory holds one row group), or this many rows. */
const GROUP_BYTES = 8 << 20;
export const PLAIN_GROUP_ROWS = 1024;

export interface PlainShardsOptions {
  dir: string;
  /** `rollouts` → rollouts-00000-of-00003.parquet, … */
  prefix: string;
  columns: Columns;
  /** A shard is closed once it passes this many bytes. */
  maxShardBytes: number;
  open: OpenOutput;
  signal: AbortSignal;
}

interface Shard {
  path: string;
  out: Writable;
  file: PlainParquetFile;
  error?: Error;
}

/**
 * Rows into size-bounded Parquet shards written by PlainParquetFile through `open` (waiting on the disk), in the order
 * given: memory holds one row group (PLAIN_GROUP_ROWS rows or 8 MB of values, whichever comes first). Shards are named for their place among all of them (`-of-N`) when the last is
 * written; one empty shard when no row came.
 */
export class PlainParquetShards {
  rows = 0;
  private shard: Shard | undefined;
  private group: Record<string, unknown>[] = [];
  private groupBytes = 0;
  private readonly done: string[] = [];

  constructor(private readonly o: PlainShardsOptions) {}

  async add(row: Record<string, unknown>): Promise<void> {
    if (this.o.signal.aborted) throw abortReason(this.o.signal);
    // The shard is opened with its first row (a row group is written when full).
    this.shard ??= await this.openShard();
    this.group.push(row);
    this.rows++;
    for (const [name] of this.o.columns) {
      const v = row[name];
      this.groupBytes += 8 + (typeof v === 'string' ? v.length : ArrayBuffer.isView(v) ? v.byteLength : Array.isArray(v) ? v.length * 8 : 0);
    }
    if (this.groupBytes >= GROUP_BYTES || this.group.length >= PLAIN_GROUP_ROWS) await this.flushGroup();
  }

  /** The last shard closed, every shard renamed to its final name; their paths. */
  async finish(): Promise<string[]> {
    await this.flushGroup();
    if (this.shard || this.done.length === 0) await this.closeShard((this.shard ??= await this.openShard()));
    return nameShards(this.o.dir, this.o.prefix, this.done);
  }

  /** After a failure: the open shard closed and removed (the caller removes the directory). */
  async abandon(): Promise<void> {
    const shard = this.shard;
    this.shard = undefined;
    this.group = [];
    if (!shard) return;
    await discardOutput(shard.out, shard.path);
  }

  private async flushGroup(): Promise<void> {
    if (this.group.length === 0) return;
    const rows = this.group;
    this.group = [];
    this.groupBytes = 0;
    const shard = (this.shard ??= await this.openShard());
    await this.write(shard, shard.file.rowGroup(rows));
    if (shard.file.offset >= this.o.maxShardBytes) await this.closeShard(shard);
  }

  private async openShard(): Promise<Shard> {
    await mkdir(this.o.dir, { recursive: true });
    const path = tempShardName(this.o.dir, this.o.prefix, this.done.length);
    const shard: Shard = { path, out: await this.o.open(path), file: new PlainParquetFile(this.o.columns) };
    shard.out.on('error', (err) => (shard.error ??= err));
    await this.write(shard, shard.file.start());
    return shard;
  }

  private async closeShard(shard: Shard): Promise<void> {
    this.shard = undefined;
    await this.write(shard, shard.file.finish());
    shard.out.end();
    try {
      await finished(shard.out);
    } catch (err) {
      throw this.failed(err as Error);
    }
    if (shard.error) throw this.failed(shard.error);
    this.done.push(shard.path);
  }

  private async write(shard: Shard, parts: Buffer[]): Promise<void> {
    for (const part of parts) await writeWaiting(shard.out, part, this.o.signal, () => shard.error, (e) => this.failed(e));
  }

  private failed(err: Error): RollerError {
    if (err instanceof RollerError) return err;
    return new RollerError(ErrorCode.SINK_WRITE_FAILED, `writing ${this.o.prefix} rows under ${this.o.dir} failed after ${this.rows} rows (${err.message}); check disk space and permissions`, { cause: err });
  }
}

