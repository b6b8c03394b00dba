import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { isMainThread } from 'node:worker_threads';

/**
 * The file operations of roller's own code, chosen by thread. On the main thread: node's asynchronous fs
 * (the thread pool), since that thread serves a proxy, a progress bar or several samples at once. In a worker
 * thread, which exists to do one job at a time: the same calls, done synchronously, behind the same promise
 * signatures.
 *
 * Why: an await on the thread pool is two thread wake-ups, and a reprocessed sample makes ~150 of them; a worker
 * sat idle a fifth of its time waiting (bench/reprocess/README.md).
 *
 * The functions keep node:fs/promises' signatures (for the forms roller uses), so a module switches by its
 * import line; errors are rejected promises in both modes, never synchronous throws.
 */

/** What roller does with an open file: FileHandle's methods of the same names, in either mode. */
export interface FileLike {
  read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
  write(buffer: Uint8Array, offset: number, length: number, position?: number | null): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  stat(): Promise<fs.Stats>;
  close(): Promise<void>;
}

/** readdir in the two forms roller uses: names, or entries with their types. */
interface Readdir {
  (path: string): Promise<string[]>;
  (path: string, options: { withFileTypes: true }): Promise<fs.Dirent[]>;
}

export interface FileOps {
  readFile: typeof fsp.readFile;
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  appendFile(path: string, data: string | Uint8Array): Promise<void>;
  mkdir: typeof fsp.mkdir;
  rm: typeof fsp.rm;
  rename: typeof fsp.rename;
  readdir: Readdir;
  copyFile: typeof fsp.copyFile;
  cp(from: string, to: string, options?: { recursive?: boolean }): Promise<void>;
  stat: typeof fsp.stat;
  open(path: string, flags?: string): Promise<FileLike>;
}

/** A synchronous call as a promise: its value, or its error as a rejection (as the async form would). */
function settle<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (err) {
    return Promise.reject(err);
  }
}

class SyncFile implements FileLike {
  constructor(private fd: number) {}

  read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }> {
    return settle(() => ({ bytesRead: fs.readSync(this.fd, buffer, offset, length, position) }));
  }

  write(buffer: Uint8Array, offset: number, length: number, position: number | null = null): Promise<{ bytesWritten: number }> {
    return settle(() => ({ bytesWritten: fs.writeSync(this.fd, buffer, offset, length, position) }));
  }

  sync(): Promise<void> {
    return settle(() => fs.fsyncSync(this.fd));
  }

  stat(): Promise<fs.Stats> {
    return settle(() => fs.fstatSync(this.fd));
  }

  /** Closing twice is harmless, as FileHandle's close is. */
  close(): Promise<void> {
    const fd = this.fd;
    if (fd < 0) return Promise.resolve();
    this.fd = -1;
    return settle(() => fs.closeSync(fd));
  }
}

export const asyncFileOps: FileOps = {
  readFile: fsp.readFile,
  writeFile: (path, data) => fsp.writeFile(path, data),
  appendFile: (path, data) => fsp.appendFile(path, data),
  mkdir: fsp.mkdir,
  rm: fsp.rm,
  rename: fsp.rename,
  readdir: ((path: string, options?: { withFileTypes: true }) => (options ? fsp.readdir(path, options) : fsp.readdir(path))) as Readdir,
  copyFile: fsp.copyFile,
  cp: (from, to, options) => fsp.cp(from, to, options),
  stat: fsp.stat,
  open: (path, flags = 'r') => fsp.open(path, flags),
};

export const syncFileOps: FileOps = {
  readFile: ((path: fs.PathOrFileDescriptor, options?: Parameters<typeof fs.readFileSync>[1]) => settle(() => fs.readFileSync(path, options))) as typeof fsp.readFile,
  writeFile: (path, data) => settle(() => fs.writeFileSync(path, data)),
  appendFile: (path, data) => settle(() => fs.appendFileSync(path, data)),
  mkdir: ((path: fs.PathLike, options?: fs.MakeDirectoryOptions) => settle(() => fs.mkdirSync(path, options))) as typeof fsp.mkdir,
  rm: (path, options) => settle(() => fs.rmSync(path, options)),
  rename: (from, to) => settle(() => fs.renameSync(from, to)),
  readdir: ((path: string, options?: { withFileTypes: true }) => settle(() => (options ? fs.readdirSync(path, options) : fs.readdirSync(path)))) as Readdir,
  copyFile: (from, to, mode) => settle(() => fs.copyFileSync(from, to, mode)),
  cp: (from, to, options) => settle(() => fs.cpSync(from, to, options)),
  stat: ((path: fs.PathLike, options?: fs.StatSyncOptions) => settle(() => fs.statSync(path, options))) as typeof fsp.stat,
  open: (path, flags = 'r') => settle(() => new SyncFile(fs.openSync(path, flags))),
};

/** This thread's file operations (see the module comment). */
export const threadFileOps: FileOps = isMainThread ? asyncFileOps : syncFileOps;
export const { readFile, writeFile, appendFile, mkdir, rm, rename, readdir, copyFile, cp, stat, open } = threadFileOps;

/** Whether this thread's file operations are synchronous (a worker thread). */
export const syncFileIo = threadFileOps === syncFileOps;
