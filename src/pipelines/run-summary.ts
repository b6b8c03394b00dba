import type { RunInfo } from '../schemas/run-info.js';
import type { TrainingSummary } from './collect/training-summary.js';

/** The run-level SFT files' counts, once they are written (seeds/003 §4.4). */
export interface RunSftCounts {
  included: number;
  segmented: number;
  /** The samples the run asked for (the rest of them are excluded). */
  total: number;
}

/**
 * run info.json `summary` (seeds/003), for collect and reprocess alike: the statuses of the sample rows, the run-level
 * SFT counts once written, the training tally, and the graders' verdicts when any task has a grader.
 */
export function runSummary(rows: RunInfo['samples'], o: { sft?: RunSftCounts | undefined; training?: TrainingSummary | undefined }): RunInfo['summary'] {
  const count = (s: string) => rows.filter((r) => r.status === s).length;
  const graded = rows.filter((r) => r.grade !== undefined);
  const verdicts = (g: string) => graded.filter((r) => r.grade === g).length;
  return {
    ok: count('ok'),
    error: count('error'),
    timeout: count('timeout'),
    skipped: count('skipped'),
    failed: count('error') + count('timeout'),
    ...(o.sft ? { sft_included: o.sft.included, sft_segmented: o.sft.segmented, sft_excluded: o.sft.total - o.sft.included - o.sft.segmented } : {}),
    ...(o.training ? { training: o.training } : {}),
    ...(graded.length > 0 ? { grades: { graded: graded.length, passed: verdicts('passed'), failed: verdicts('failed'), timeout: verdicts('timeout'), error: verdicts('error') } } : {}),
  };
}
