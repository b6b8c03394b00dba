import { createWriteStream } from 'node:fs';
import { readFile, rename, rm } from '../../core/thread-fs.js';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { compactJson } from '../../core/compact-json.js';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';

/** What one sample adds to the run-level SFT files: JSONL bytes, each line a record as its sample file holds it. */
export interface SampleSftLines {
  /** Its linear record (sft.jsonl), or null. */
  linear: Buffer | null;
  /** Its compaction segments in order (sft_segments.jsonl), or null. */
  segments: Buffer | null;
}

/**
 * A sample's contribution (seeds/003 §4.3–4.4): ok and reused samples only; a compacted one's segments, else
 * its linear record when eligible. null: it contributes nothing.
 */
export async function sampleSftLines(dir: string, info: SampleInfo): Promise<SampleSftLines | null> {
  if (info.status !== 'ok' && info.status !== 'skipped') return null;
  // The files are roller's own (JSON.stringify with an indent): their compact form is the line, byte for byte.
  const line = async (rel: string) => compactJson(await readFile(join(dir, rel)), { newline: true, origin: join(dir, rel) });
  if (info.trajectory.sft_segments && info.trajectory.sft_segments.length > 0) {
    const parts: Buffer[] = [];
    for (const s of info.trajectory.sft_segments) parts.push(await line(s.path));
    return { linear: null, segments: Buffer.concat(parts) };
  }
  if (!info.runtime.sft_eligibility?.eligible || !info.trajectory.sft) return null;
  return { linear: await line(info.trajectory.sft), segments: null };
}

/**
 * Run-level sft.jsonl (seeds/003 §4.4): the linear SFT records of ok and reused samples whose SFT is
 * eligible, in request-index order, streamed to a temp file and renamed (an empty file when none is
 * eligible). Compacted samples contribute their segments to sft_segments.jsonl instead (written only when
 * there are any), and are counted as segmented, neither included nor excluded. Samples are added one at a
 * time in request order (`add`), so a caller may write them as they finish; nothing replaces the run's files
 * before `commit`.
 */
export class RunSftFiles {
  private readonly linear: AtomicJsonl;
  private segments: AtomicJsonl | undefined;
  private included = 0;
  private segmented = 0;

  constructor(private readonly runDir: string) {
    this.linear = new AtomicJsonl(join(runDir, 'sft.jsonl'));
  }

  /** The next sample's contribution (null: none). */
  async add(lines: SampleSftLines | null): Promise<void> {
    if (!lines) return;
    if (lines.segments) {
      this.segments ??= new AtomicJsonl(join(this.runDir, 'sft_segments.jsonl'));
      await this.segments.write(lines.segments);
      this.segmented++;
    } else if (lines.linear) {
      await this.linear.write(lines.linear);
      this.included++;
    }
  }

  async commit(): Promise<{ included: number; segmented: number }> {
    await this.linear.commit();
    if (this.segments) await this.segments.commit();
    else await rm(join(this.runDir, 'sft_segments.jsonl'), { force: true });
    return { included: this.included, segmented: this.segmented };
  }

  /** After a failure, or when the run's files are not to be replaced: the temp files go (a no-op after commit). */
  async abandon(): Promise<void> {
    await this.linear.abandon();
    await this.segments?.abandon();
  }
}

/** The lines a sample of a run tree contributes: its row must be there (else nothing), and be ok or reused. */
export async function rowSftLines(dir: string, row: RunInfo['samples'][number] | undefined): Promise<SampleSftLines | null> {
  if (!row || (row.status !== 'ok' && row.status !== 'skipped')) return null;
  return sampleSftLines(dir, JSON.parse(await readFile(join(dir, 'info.json'), 'utf8')) as SampleInfo);
}

/** RunSftFiles over every sample of a run at once, read from their files. */
export async function writeRunSft(runDir: string, samples: { dir: string; row: RunInfo['samples'][number] | undefined }[]): Promise<{ included: number; segmented: number }> {
  const files = new RunSftFiles(runDir);
  try {
    for (const { dir, row } of samples) await files.add(await rowSftLines(dir, row));
    return await files.commit();
  } finally {
    await files.abandon();
  }
}

/** A JSONL file written to a temp name with backpressure and renamed into place only when complete. */
class AtomicJsonl {
  private readonly tmp: string;
  private readonly out;
  private done = false;
  constructor(private readonly path: string) {
    this.tmp = `${path}.${process.pid}.tmp`;
    this.out = createWriteStream(this.tmp);
  }
  async write(lines: Buffer): Promise<void> {
    if (!this.out.write(lines)) await new Promise<void>((r) => this.out.once('drain', () => r()));
  }
  async commit(): Promise<void> {
    this.out.end();
    await finished(this.out);
    await rename(this.tmp, this.path);
    this.done = true;
  }
  /** After a failure: close and remove the temp file (a no-op once committed). */
  async abandon(): Promise<void> {
    if (this.done) return;
    this.out.destroy();
    await rm(this.tmp, { force: true });
  }
}
