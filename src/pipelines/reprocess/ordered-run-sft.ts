import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { RunInfo } from '../../schemas/run-info.js';
import { rowSftLines, RunSftFiles, type SampleSftLines } from '../collect/run-sft.js';

type Row = RunInfo['samples'][number];

/** Bytes of lines that finished ahead of their turn held in memory by default; past it they wait in a file. */
const HELD_BYTES = 64 * 2 ** 20;

/**
 * What a settled row contributes: the lines its worker encoded (in memory, or spilled to a file), or whatever
 * its files in the output say, read at its turn (a sample left unchanged, or one not reprocessed this time).
 */
type Settled = { lines: SampleSftLines | null } | { spill: string } | { fromFiles: true };

const sizeOf = (l: SampleSftLines | null) => (l?.linear?.length ?? 0) + (l?.segments?.length ?? 0);

/**
 * The run-level SFT files of a reprocess, written while its samples finish. A row's lines are appended as soon
 * as every row before it (request order) is settled, so the end of the run only renames: written at the end,
 * the 41 MB sft.jsonl of the 1 GB bench archive was ~0.2 s of one core with the other idle. Lines that finish
 * ahead of their turn wait in memory up to `heldBytes`, then in files under `spillDir`, so memory stays bounded
 * whatever order samples finish in. Nothing is written before `start` (a reprocess that writes no sample
 * leaves the run's files alone) and nothing replaces them before `commit`.
 *
 * The contribution of a row is the one the run files had when they were written at the end: none unless the
 * output holds the row's sample (its info.json) and the row is ok or reused.
 */
export class OrderedRunSft {
  private readonly settled = new Map<number, Settled>();
  private next = 0;
  private held = 0;
  private spills = 0;
  private files: RunSftFiles | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly output: string,
    private readonly rows: Row[],
    private readonly spillDir: string,
    private readonly heldBytes = HELD_BYTES,
  ) {}

  /**
   * Row i is settled, with the lines its worker encoded, or undefined to read them from the output at its
   * turn. Resolves once they are written or put aside; never rejects (a failure is commit's error).
   */
  settle(i: number, lines: SampleSftLines | null | undefined): Promise<void> {
    return this.step(() => this.place(i, lines === undefined ? { fromFiles: true } : { lines }));
  }

  /** From now on rows are written as they are settled (and those settled already, in order). */
  start(): void {
    this.files ??= new RunSftFiles(this.output);
    void this.step(() => this.flush());
  }

  /** Every row settled: the files renamed into place, and the counts of what they hold. */
  async commit(): Promise<{ included: number; segmented: number }> {
    this.start();
    await this.chain;
    if (this.failure) throw this.failure;
    if (this.next !== this.rows.length) throw new RollerError(ErrorCode.SINK_WRITE_FAILED, `${join(this.output, 'sft.jsonl')}: ${this.rows.length - this.next - this.settled.size} of ${this.rows.length} rows never settled (row ${this.next} first)`);
    return this.files!.commit();
  }

  /** Temp and spill files go; the run's files stay as they were (a no-op after commit). */
  async abandon(): Promise<void> {
    await this.chain;
    await this.files?.abandon();
    await rm(this.spillDir, { recursive: true, force: true });
  }

  private step(work: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(() => (this.failure ? undefined : work())).catch((err: Error) => {
      this.failure ??= err;
    });
    return this.chain;
  }

  private async place(i: number, entry: Settled): Promise<void> {
    if ('lines' in entry && i !== this.next && this.held + sizeOf(entry.lines) > this.heldBytes && entry.lines) {
      const spill = join(this.spillDir, String(this.spills++));
      await mkdir(this.spillDir, { recursive: true });
      await writeFile(`${spill}.sft`, entry.lines.linear ?? '');
      await writeFile(`${spill}.segments`, entry.lines.segments ?? '');
      entry = { spill };
    }
    if ('lines' in entry) this.held += sizeOf(entry.lines);
    this.settled.set(i, entry);
    await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.files) return;
    for (let entry = this.settled.get(this.next); entry; entry = this.settled.get(this.next)) {
      this.settled.delete(this.next);
      await this.files.add(await this.linesOf(this.rows[this.next]!, entry));
      if ('lines' in entry) this.held -= sizeOf(entry.lines);
      this.next++;
    }
  }

  private async linesOf(row: Row, entry: Settled): Promise<SampleSftLines | null> {
    const dir = join(this.output, row.path);
    if (!existsSync(join(dir, 'info.json')) || (row.status !== 'ok' && row.status !== 'skipped')) return null;
    if ('lines' in entry) return entry.lines;
    if ('spill' in entry) {
      const linear = await readFile(`${entry.spill}.sft`);
      const segments = await readFile(`${entry.spill}.segments`);
      await rm(`${entry.spill}.sft`);
      await rm(`${entry.spill}.segments`);
      return { linear: linear.length > 0 ? linear : null, segments: segments.length > 0 ? segments : null };
    }
    return rowSftLines(dir, row);
  }
}
