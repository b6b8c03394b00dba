import type { Columns } from '../../core/parquet/columns.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import { sampleLocation } from '../sample-location.js';

/**
 * Where a training row came from, in one struct column beside the training columns (a trainer selects `messages`
 * and `tools` and never sees it): the sample and its task, model and harness, how it ended, its grade and tokens.
 */
export const PROVENANCE_COLUMNS: Columns = [
  ['run', 'string'],
  ['sample', 'string'],
  ['index', 'int64'],
  ['segment', 'int64'],
  ['task_id', 'string'],
  ['model', 'string'],
  ['harness', 'string'],
  ['harness_version', 'string'],
  ['status', 'string'],
  ['grade', 'string'],
  ['scores', 'string'],
  ['input', 'int64'],
  ['cache_creation', 'int64'],
  ['cache_read', 'int64'],
  ['output', 'int64'],
  ['reasoning', 'int64'],
  ['requests', 'int64'],
  ['cost_usd', 'float64'],
];

export function provenanceOf(sample: FinishedSample, segment: number | null) {
  const info = sample.info;
  const usage = info.usage;
  return {
    ...sampleLocation(sample.dir),
    index: info.index,
    segment,
    task_id: info.task_id ?? null,
    model: info.model ?? null,
    harness: info.harness?.name ?? null,
    harness_version: info.harness?.version ?? null,
    status: info.status,
    grade: info.grade?.status ?? null,
    scores: info.grade ? JSON.stringify(info.grade.scores) : null,
    input: usage?.input ?? null,
    cache_creation: usage?.cache_creation ?? null,
    cache_read: usage?.cached_input ?? null,
    output: usage?.output ?? null,
    reasoning: usage?.reasoning ?? null,
    requests: usage?.requests ?? null,
    cost_usd: usage?.cost_usd ?? null,
  };
}
