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
  return {
    connection: async () => {
      opened ??= (async () => {
        const { DuckDBInstance } = await import('@duckdb/node-api');
        const instance = await DuckDBInstance.create(':memory:', { memory_limit: memoryLimit, threads: '2' });
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
    },
  };
}
