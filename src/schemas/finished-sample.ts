import type { Actf } from './actf.js';
import type { Call } from './call.js';
import type { Relation } from './relation.js';
import type { SampleInfo } from './run-info.js';

/** What one sample adds to the run-level SFT files: JSONL bytes, each line a record as its sample file holds it. */
export interface SampleSftLines {
  /** Its linear record (sft.jsonl), or null. */
  linear: Buffer | null;
  /** Its compaction segments in order (sft_segments.jsonl), or null. */
  segments: Buffer | null;
  /** Its completed sub-agents' records in tree order (sft_subagents.jsonl), or null. */
  subagents?: Buffer | null;
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
  /** The attributed calls of its final capture attempt, as published (none without a capture). */
  calls(): AsyncIterable<Call>;
  /** The relations of its final capture attempt (none without a capture). */
  relations(): Promise<Relation[]>;
  /** Its contribution to the run-level SFT files (seeds/003 §4.3–4.4), or null. */
  sftLines(): Promise<SampleSftLines | null>;
}
