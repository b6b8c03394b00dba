import { join } from 'node:path';
import { compactJson } from '../core/compact-json.js';
import { readFile } from '../core/thread-fs.js';
import type { Actf } from '../schemas/actf.js';
import type { Relation } from '../schemas/relation.js';
import type { SampleInfo } from '../schemas/run-info.js';

/** What one sample adds to the run-level SFT files: JSONL bytes, each line a record as its sample file holds it. */
export interface SampleSftLines {
  /** Its linear record (sft.jsonl), or null. */
  linear: Buffer | null;
  /** Its compaction segments in order (sft_segments.jsonl), or null. */
  segments: Buffer | null;
}

/**
 * A finished sample, as the sample stream carries it (the second stream kind; the first is attributed calls): where
 * it is and its info.json, and its other outputs read on demand from its finished files — a sink takes what it
 * needs, nothing is held for the others. Made in the thread whose sinks read it (it holds functions).
 */
export interface FinishedSample {
  /** The sample directory. */
  dir: string;
  /** Its request index (the run's order). */
  index: number;
  info: SampleInfo;
  actf(): Promise<Actf | null>;
  /** The relations of its final capture attempt (none without a capture). */
  relations(): Promise<Relation[]>;
  /** Its contribution to the run-level SFT files (seeds/003 §4.3–4.4), or null. */
  sftLines(): Promise<SampleSftLines | null>;
}

/** A finished sample from its directory; `sftLines` given when a worker encoded them already (reprocess). */
export function finishedSample(dir: string, info: SampleInfo, encoded?: SampleSftLines | null): FinishedSample {
  return {
    dir,
    index: info.index,
    info,
    actf: async () => (info.trajectory.actf ? (JSON.parse(await readFile(join(dir, info.trajectory.actf), 'utf8')) as Actf) : null),
    relations: async () => {
      const capture = (info.runtime.capture as { path?: string } | null | undefined)?.path;
      if (!capture) return [];
      const text = await readFile(join(dir, capture, 'relations.jsonl'), 'utf8').catch(() => '');
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Relation);
    },
    sftLines: () => (encoded !== undefined ? Promise.resolve(encoded) : sampleSftLines(dir, info)),
  };
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
