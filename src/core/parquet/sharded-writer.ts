import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ErrorCode, RollerError } from '../errors.js';
import { collectGarbage } from '../heap.js';
import type { OpenOutput } from '../output.js';
import { duckdbColumns, type Columns } from './columns.js';
import { discardOutput, nameShards, tempShardName, writeWaiting } from './shard-files.js';

/**
 * read_json allocates buffers of twice its maximum_object_size: the shard's longest line is its limit (a record can
 * hold a tool result of hundreds of MB; the default limit is 16 MB), and DuckDB's memory limit is raised to fit it.
 */
const objectLimit = (longest: number) => Math.max(longest + 1, 1 << 20);
const memoryLimit = (longest: number) => `${Math.max(256, Math.ceil((3 * objectLimit(longest)) / (1 << 20)) + 64)}MB`;

export interface ShardedParquetOptions {
  /** Where the shards go. */
  dir: string;
  /** `train` → train-00000-of-00003.parquet, … */
  prefix: string;
  columns: Columns;
  /** A shard is closed before its rows' JSON passes this many bytes (the Parquet file, compressed, is smaller). */
  maxShardBytes: number;
  open: OpenOutput;
  /** The DuckDB connection that converts each shard (opened once, on the first shard). */
  duckdb: () => Promise<DuckDBConnection>;
  signal: AbortSignal;
}

interface Stage {
  path: string;
  out: Writable;
  bytes: number;
  rows: number;
  longest: number;
  error?: Error;
}

/**
 * Rows into size-bounded Parquet shards, in the order given. Each shard's rows are staged as JSON lines (written
 * through `open`, waiting on the disk) and converted by DuckDB's COPY with every column typed (nothing inferred), then
 * the staging file is removed (snappy, as pyarrow and the Hub write by default: every Parquet reader has it; row
 * groups of 256 rows: DuckDB converts 2,048 rows at a time, so a shard, not the run, bounds its memory). Memory holds
 * one row at a time, the disk one shard's JSON. Shards are named for their
 * place among all of them (`-of-N`) only when the last is written.
 */
export class ShardedParquet {
  rows = 0;
  /** Every row's JSON line, in bytes: the data uncompressed (a dataset card's split size). */
  jsonBytes = 0;
  private stage: Stage | undefined;
  private readonly shards: string[] = [];

  constructor(private readonly options: ShardedParquetOptions) {}

  async add(row: unknown): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(row)}\n`);
    if (this.stage && this.stage.rows > 0 && this.stage.bytes + line.length > this.options.maxShardBytes) await this.closeShard();
    const stage = (this.stage ??= await this.openStage());
    stage.bytes += line.length;
    stage.longest = Math.max(stage.longest, line.length);
    stage.rows++;
    this.rows++;
    this.jsonBytes += line.length;
    await writeWaiting(stage.out, line, this.options.signal, () => stage.error, (e) => this.failed(e));
  }

  /** The last shard written, every shard renamed to its final name (one empty shard when no row came); their paths. */
  async finish(): Promise<string[]> {
    if (this.stage || this.shards.length === 0) {
      this.stage ??= await this.openStage();
      await this.closeShard();
    }
    return nameShards(this.options.dir, this.options.prefix, this.shards);
  }

  /** After a failure: the staging file closed and removed (the caller removes the directory). */
  async abandon(): Promise<void> {
    const stage = this.stage;
    this.stage = undefined;
    if (!stage) return;
    await discardOutput(stage.out, stage.path);
  }

  private async openStage(): Promise<Stage> {
    await mkdir(this.options.dir, { recursive: true });
    const path = join(this.options.dir, `.${this.options.prefix}-${pad(this.shards.length)}.jsonl`);
    const out = await this.options.open(path);
    const stage: Stage = { path, out, bytes: 0, rows: 0, longest: 0 };
    out.on('error', (err) => (stage.error ??= err));
    return stage;
  }

  private async closeShard(): Promise<void> {
    const stage = this.stage!;
    this.stage = undefined;
    stage.out.end();
    try {
      await finished(stage.out);
    } catch (err) {
      throw this.failed(err as Error);
    }
    if (stage.error) throw this.failed(stage.error);
    const target = tempShardName(this.options.dir, this.options.prefix, this.shards.length);
    const db = await this.options.duckdb();
    const source = `read_json('${sql(stage.path)}', format = 'newline_delimited', columns = ${duckdbColumns(this.options.columns)}, maximum_object_size = ${objectLimit(stage.longest)})`;
    // The conversion's memory (~100 MB for a shard of large records) must not stack on the garbage V8 let build up
    // while the shard was staged: a full collection first (bench/export: hf at 100,000 samples peaked at 365 MB without it).
    collectGarbage();
    try {
      await db.run(`SET memory_limit = '${memoryLimit(stage.longest)}'`);
      await db.run(`COPY (SELECT * FROM ${source}) TO '${sql(target)}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 256)`);
    } catch (err) {
      throw new RollerError(ErrorCode.SINK_WRITE_FAILED, `writing ${target} failed (${(err as Error).message.trim()}); check disk space`, { cause: err });
    }
    this.shards.push(target);
    await rm(stage.path, { force: true });
  }

  private failed(err: Error): RollerError {
    if (err instanceof RollerError) return err;
    return new RollerError(ErrorCode.SINK_WRITE_FAILED, `staging ${this.options.prefix} rows under ${this.options.dir} failed after ${this.rows} rows (${err.message}); check disk space and permissions`, { cause: err });
  }
}

const pad = (n: number) => String(n).padStart(5, '0');
const sql = (s: string) => s.replace(/'/g, "''");

/** A file's size, for a dataset card's counts. */
export const fileBytes = async (path: string) => (await stat(path)).size;
