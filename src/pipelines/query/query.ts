import { existsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { PARQUET_TABLES } from '../../sinks/parquet-tables/sink.js';
import { defineRunViews, sampleFilesOf } from './run-views.js';

export type QueryFormat = 'table' | 'csv' | 'json';

export interface RunQuery {
  /** The connection, the views defined: run more statements on it. */
  db: DuckDBConnection;
  close(): void;
}

/**
 * What a query may use (docs/commands/query.md): memory DuckDB holds at most — half the machine's, at least 6 GiB (a
 * calls.jsonl line may be 1 GiB, and DuckDB's JSON reader keeps twice that), never past 80 % — and seconds before it
 * is interrupted.
 */
export const queryMemoryLimitMiB = (): number => Math.floor(Math.min(totalmem() * 0.8, Math.max(6 * 2 ** 30, totalmem() / 2)) / 2 ** 20);
export const QUERY_TIMEOUT_S = 300;

/**
 * An in-memory DuckDB with the views over these runs' files (`roller query`; the library's SQL over runs). Confined
 * (the default): DuckDB may read files only under the runs' directories, cannot touch any other file or the network,
 * holds at most queryMemoryLimitMiB(), and its settings are locked (a statement cannot undo this).
 */
export async function openRunQuery(runDirs: string[], options: { confined?: boolean } = {}): Promise<RunQuery> {
  if (runDirs.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'name at least one run directory');
  const exports = runDirs.filter(isParquetExport);
  if (exports.length > 0 && exports.length < runDirs.length) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${exports[0]} is a Parquet export and ${runDirs.find((d) => !isParquetExport(d))} a run: query runs, or Parquet exports, not both at once`);
  }
  const files = exports.length > 0 ? [] : await sampleFilesOf(runDirs);
  // Loaded here, not at import: importing the library must not load DuckDB's 50 MB native library.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    if (exports.length > 0) await defineExportViews(db, exports);
    else await defineRunViews(db, runDirs, files);
    if (options.confined !== false) await confine(db, runDirs);
  } catch (err) {
    db.closeSync();
    instance.closeSync();
    throw err;
  }
  return {
    db,
    close: () => {
      db.closeSync();
      instance.closeSync();
    },
  };
}

async function confine(db: DuckDBConnection, dirs: readonly string[]): Promise<void> {
  const allowed = dirs.map((d) => `'${`${resolve(d)}/`.replace(/'/g, "''")}'`);
  await db.run(`SET allowed_directories = [${allowed.join(', ')}]`);
  await db.run('SET enable_external_access = false');
  await db.run(`SET memory_limit = '${queryMemoryLimitMiB()}MiB'`);
  await db.run('SET lock_configuration = true');
}

/** A directory `roller export --format parquet` wrote: its tables, and no run info.json. */
export const isParquetExport = (dir: string): boolean => !existsSync(join(dir, 'info.json')) && PARQUET_TABLES.every((t) => existsSync(join(dir, t)));

/** The views of the tables a Parquet export holds (samples, participants, calls, relations), over every export named. */
async function defineExportViews(db: DuckDBConnection, dirs: string[]): Promise<void> {
  for (const table of PARQUET_TABLES) {
    const files = dirs.map((d) => `'${join(resolve(d), table).replace(/'/g, "''")}/*.parquet'`);
    await db.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet([${files.join(', ')}], union_by_name = true)`);
  }
}

/**
 * Runs one SQL statement and writes its rows as they stream out of DuckDB: a table (aligned, for a person), CSV or
 * JSON lines. A DuckDB error (bad SQL, a missing column) is a typed error quoting DuckDB's message.
 */
export async function queryRuns(runDirs: string[], sql: string, format: QueryFormat, write: (line: string) => Promise<void>): Promise<number> {
  const q = await openRunQuery(runDirs);
  // A runaway statement (a cross join of every call) is interrupted, said so: never an endless wait.
  let timedOut = false;
  const timer = setTimeout(() => ((timedOut = true), q.db.interrupt()), QUERY_TIMEOUT_S * 1000);
  try {
    let result;
    try {
      result = await (await readingStatement(q.db, sql)).stream();
    } catch (err) {
      if (err instanceof RollerError) throw err;
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `the query failed: ${timedOut ? `it ran past ${QUERY_TIMEOUT_S} s and was interrupted` : (err as Error).message.trim()}`);
    }
    const names = result.columnNames();
    let rows = 0;
    const table: string[][] = [];
    if (format === 'csv') await write(names.map(csvCell).join(','));
    for await (const chunk of result.yieldRowsJs()) {
      for (const raw of chunk) {
        rows++;
        const row = raw.map(plain);
        if (format === 'json') await write(JSON.stringify(Object.fromEntries(names.map((n, i) => [n, row[i] ?? null]))));
        else if (format === 'csv') await write(row.map((v) => csvCell(v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v))).join(','));
        else table.push(row.map((v) => (v === null || v === undefined ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v))));
      }
    }
    if (format === 'table') for (const line of alignedTable(names, table)) await write(line);
    return rows;
  } catch (err) {
    if (timedOut && !(err instanceof RollerError)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `the query ran past ${QUERY_TIMEOUT_S} s and was interrupted`);
    throw err;
  } finally {
    clearTimeout(timer);
    q.close();
  }
}

/** The one statement of `sql`, prepared, when it only reads (SELECT, EXPLAIN); anything else is refused, named. */
async function readingStatement(db: DuckDBConnection, sql: string) {
  const { StatementType } = await import('@duckdb/node-api');
  const extracted = await db.extractStatements(sql);
  if (extracted.count !== 1) throw new RollerError(ErrorCode.INVALID_OPTIONS, `roller query runs one statement; this SQL holds ${extracted.count}`);
  const prepared = await extracted.prepare(0);
  const type = prepared.statementType;
  if (type !== StatementType.SELECT && type !== StatementType.EXPLAIN) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `roller query only reads: a ${StatementType[type] ?? type} statement is refused (SELECT or EXPLAIN over the views; nothing is written)`);
  }
  return prepared;
}

/** DuckDB's JS values as JSON can hold them: a BIGINT a number while exact (a string past 2^53), a timestamp in ISO form. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const csvCell = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function alignedTable(names: string[], rows: string[][]): string[] {
  const cut = (s: string) => (s.length > 80 ? `${s.slice(0, 79)}…` : s).replace(/\n/g, ' ');
  const cells = [names, ...rows].map((r) => r.map(cut));
  const widths = names.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line), `(${rows.length} row${rows.length === 1 ? '' : 's'})`];
}
