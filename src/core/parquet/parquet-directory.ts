import { join } from 'node:path';
import { buildDirectory } from '../built-directory.js';
import type { OpenOutput } from '../output.js';
import type { Columns } from './columns.js';
import { lazyDuckdb } from './duckdb.js';
import { ShardedParquet } from './sharded-writer.js';

/**
 * A directory of Parquet tables built beside OUTPUT and renamed into it when `fill` succeeds (buildDirectory): one
 * ShardedParquet per table under `<output>/<table>/`, one DuckDB connection converting them. `fill` adds the rows and
 * finishes the tables it wants kept; on any failure every table is abandoned and nothing is left.
 */
export async function buildParquetDirectory<N extends string, T>(
  o: { output: string; what: string; tables: Readonly<Record<N, { prefix: string; columns: Columns }>>; maxShardBytes: number; open: OpenOutput; signal: AbortSignal },
  fill: (tables: Record<N, ShardedParquet>, building: string) => Promise<T>,
): Promise<T> {
  return buildDirectory(o.output, o.what, async (building) => {
    const duckdb = lazyDuckdb();
    const names = Object.keys(o.tables) as N[];
    const tables = Object.fromEntries(
      names.map((n) => [n, new ShardedParquet({ dir: join(building, n), prefix: o.tables[n].prefix, columns: o.tables[n].columns, maxShardBytes: o.maxShardBytes, open: o.open, duckdb: duckdb.connection, signal: o.signal })]),
    ) as Record<N, ShardedParquet>;
    try {
      return await fill(tables, building);
    } catch (err) {
      for (const n of names) await tables[n].abandon();
      throw err;
    } finally {
      await duckdb.close();
    }
  });
}
