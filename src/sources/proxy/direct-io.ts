import { constants as fsConstants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Direct I/O (O_DIRECT) for the wire log: the writer's and a follower's side of it. Every offset, length and
 * memory address is a multiple of DIRECT_BLOCK — 4 KB covers devices with 512-byte and 4 KB logical blocks and keeps
 * ext4 on its aligned path. O_DIRECT is Linux's: elsewhere the constant is undefined and callers use the page cache.
 */
export const DIRECT_BLOCK = 4096;

/** The WebAssembly global (Node has it; the DOM lib that would type it is not in this build). */
const Wasm = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => { buffer: ArrayBuffer } } }).WebAssembly;

/**
 * Memory aligned for direct I/O, which Buffer.allocUnsafe does not promise (malloc'd, often 16 bytes past a page):
 * a WebAssembly memory is page-aligned. Its length is a multiple of 64 KB, so a padded last block always fits. Each
 * one reserves ~10 GB of address space: allocate few (arenas, one read buffer per follower).
 */
export function alignedBuffer(bytes: number): Buffer {
  const pages = Math.ceil(bytes / 65536);
  return Buffer.from(new Wasm.Memory({ initial: pages, maximum: pages }).buffer);
}

/** `flags` with O_DIRECT, or undefined where the platform has none. */
export function withDirect(flags: number): number | undefined {
  return fsConstants.O_DIRECT === undefined ? undefined : flags | fsConstants.O_DIRECT;
}

/**
 * Reads with O_DIRECT: from the block that holds `position`, into aligned memory, copied out from there. A
 * follower reads only committed bytes, and those are the same in every version of a block the writer rewrites.
 */
export class DirectReads {
  private readonly scratch = alignedBuffer(1 << 20);

  private constructor(private readonly handle: FileHandle) {}

  /** undefined where O_DIRECT is refused (the caller reads through the page cache). */
  static async open(path: string): Promise<DirectReads | undefined> {
    const flags = withDirect(fsConstants.O_RDONLY);
    if (flags === undefined) return undefined;
    try {
      return new DirectReads(await open(path, flags));
    } catch {
      return undefined; // the file system refuses it (some FUSE ones, tmpfs before Linux 6.6)
    }
  }

  /** Up to `length` bytes from `position` into dest[offset…]; how many (fewer at the end of the file). */
  async read(dest: Buffer, offset: number, length: number, position: number): Promise<number> {
    const from = position - (position % DIRECT_BLOCK);
    const skew = position - from;
    const span = Math.min(Math.ceil((skew + length) / DIRECT_BLOCK) * DIRECT_BLOCK, this.scratch.length);
    const { bytesRead } = await this.handle.read(this.scratch, 0, span, from);
    const n = Math.max(0, Math.min(bytesRead - skew, length));
    this.scratch.copy(dest, offset, skew, skew + n);
    return n;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
