import Database from 'better-sqlite3';
import { ErrorCode, RollerError } from './errors.js';

/**
 * A harness's SQLite store opened read-only (never parsed by hand: most of a live database is in its -wal
 * file). A file SQLite cannot open is a typed error naming it.
 */
export function openReadonlySqlite(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: cannot be opened with SQLite (${(err as Error).message})`);
  }
}
