import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';

export interface LazyDuckdb {
  /** The connection, opened on first use. */
  connection(): Promise<DuckDBConnection>;
  close(): Promise<void>;
}

/**
 * An in-memory DuckDB opened when first asked for: its ~50 MB native library is loaded by the writes that need it,
 * never by importing roller. `memoryLimit` keeps a conversion's memory bounded (DuckDB spills past it).
 */
export function lazyDuckdb(memoryLimit = '256MB'): LazyDuckdb {
  let opened: Promise<{ close(): void; db: DuckDBConnection }> | undefined;
  let closed = false;
  let spill: string | undefined;
  return {
    connection: async () => {
      opened ??= (async () => {
        const { DuckDBInstance } = await import('@duckdb/node-api');
        spill = await mkdtemp(join(tmpdir(), 'roller-duckdb-'));
        // DuckDB's jemalloc keeps a conversion's freed pages (~100 MB a shard, growing over shards) until a background
        // thread returns them: with it, RSS falls back between shards (bench/export).
        const instance = await DuckDBInstance.create(':memory:', { memory_limit: memoryLimit, threads: '1', temp_directory: spill, allocator_background_threads: 'true' });
        const db = await instance.connect();
        return {
          db,
          close: () => {
            db.closeSync();
            instance.closeSync();
          },
        };
      })();
      return (await opened).db;
    },
    close: async () => {
      if (closed || !opened) return;
      closed = true;
      (await opened.catch(() => undefined))?.close();
      if (spill) await rm(spill, { recursive: true, force: true });
    },
  };
}
