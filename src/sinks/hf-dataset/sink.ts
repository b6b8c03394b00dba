import { writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { buildParquetDirectory } from '../../core/parquet/parquet-directory.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { openFileOutput, type OpenOutput } from '../../core/output.js';
import { type Columns } from '../../core/parquet/columns.js';
import { fileBytes, ShardedParquet } from '../../core/parquet/sharded-writer.js';
import type { Sink, SinkReport, StageContext } from '../../core/stage.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import type { SftRecord, SftSubagentRecord } from '../../schemas/sft.js';
import { rollerVersion } from '../../core/version.js';
import { datasetCard, type DatasetConfig } from './card.js';
import { PROVENANCE_COLUMNS, provenanceOf } from './provenance.js';
import { SEGMENT_COLUMNS, sftRow, TRAINING_COLUMNS } from './rows.js';

export const HfDatasetOptions = z
  .strictObject({
    output: z.string().min(1).describe('the dataset directory (made; refused when it exists and is not empty)'),
    max_shard_bytes: z.number().int().positive().default(64 << 20).describe("a shard is closed before its records' JSON passes this many bytes (its Parquet file is smaller)"),
    title: z.string().min(1).optional().describe("the dataset card's title (default: the run's name)"),
  })
  .describe('a Hugging Face dataset directory: Parquet shards of the SFT records (config default = sft.jsonl, config segments = sft_segments.jsonl, config subagents = sft_subagents.jsonl) with a provenance column, and a dataset card');
export type HfDatasetOptions = z.input<typeof HfDatasetOptions>;

const withProvenance = (columns: Columns): Columns => [...columns, ['provenance', { struct: PROVENANCE_COLUMNS }]];
export const HF_LINEAR_COLUMNS = withProvenance(TRAINING_COLUMNS);
export const HF_SEGMENT_COLUMNS = withProvenance(SEGMENT_COLUMNS);
/** Where a sub-agent's record comes from (SftSubagentSource). */
const SUBAGENT_COLUMNS: Columns = [
  ['participant_id', 'string'],
  ['parent_participant_id', 'string'],
  ['spawn_tool_call_id', 'string'],
  ['depth', 'int64'],
];
export const HF_SUBAGENT_COLUMNS = withProvenance([...TRAINING_COLUMNS, ['subagent', { struct: SUBAGENT_COLUMNS }]]);

/**
 * The run's SFT records as a Hugging Face dataset (samples in request order; the same records as sft.jsonl and
 * sft_segments.jsonl: FinishedSample.sftLines decides for both). Built beside OUTPUT and renamed into it when the
 * stream ends (buildDirectory): a failed or aborted export leaves nothing. `written`: samples that gave rows.
 */
export function createHfDatasetSink(options: HfDatasetOptions, open: OpenOutput = openFileOutput): Sink<FinishedSample> {
  const o = HfDatasetOptions.parse(options);
  const name = 'hf-dataset';
  return {
    name,
    async consume(input: AsyncIterable<FinishedSample>, ctx: StageContext): Promise<SinkReport> {
      const facts = { samples: 0, contributed: 0, excluded: {} as Record<string, number>, harnesses: {} as Record<string, number>, models: {} as Record<string, number>, runs: new Set<string>() };
      const tables = { data: { prefix: 'train', columns: HF_LINEAR_COLUMNS }, segments: { prefix: 'train', columns: HF_SEGMENT_COLUMNS }, subagents: { prefix: 'train', columns: HF_SUBAGENT_COLUMNS } };
      const rows = await buildParquetDirectory({ output: o.output, what: 'the dataset', tables, maxShardBytes: o.max_shard_bytes, open, signal: ctx.signal }, async ({ data: linear, segments, subagents }, building) => {
        for await (const sample of abortableInput(input, ctx.signal)) {
          facts.samples++;
          const info = sample.info;
          count(facts.harnesses, info.harness ? `${info.harness.name} ${info.harness.version}` : 'unknown');
          count(facts.models, info.model ?? 'unknown');
          const lines = await sample.sftLines();
          if (!lines?.linear && !lines?.segments) count(facts.excluded, exclusionOf(sample));
          if (!lines) continue;
          facts.contributed++;
          const row = (line: string, segment: number | null) => {
            const provenance = provenanceOf(sample, segment);
            facts.runs.add(provenance.run);
            try {
              return { ...sftRow(JSON.parse(line) as SftRecord), provenance };
            } catch (err) {
              throw new RollerError(ErrorCode.CONVERSION_INVALID, `${sample.dir}: its SFT record cannot be written as a dataset row (${(err as Error).message})`, { cause: err });
            }
          };
          if (lines.linear) await linear.add(row(lines.linear.toString('utf8').trimEnd(), null));
          if (lines.segments) {
            const parts = lines.segments.toString('utf8').split('\n').filter(Boolean);
            for (const [i, line] of parts.entries()) await segments.add(row(line, i + 1));
          }
          for (const line of lines.subagents?.toString('utf8').split('\n').filter(Boolean) ?? []) {
            const { subagent, ...record } = JSON.parse(line) as SftSubagentRecord;
            const { participant_id, parent_participant_id, spawn_tool_call_id, depth } = subagent;
            await subagents.add({ ...row(JSON.stringify(record), null), subagent: { participant_id, parent_participant_id, spawn_tool_call_id, depth } });
          }
        }
        const configs: DatasetConfig[] = [await config('default', 'data', HF_LINEAR_COLUMNS, linear, building)];
        if (segments.rows > 0) configs.push(await config('segments', 'segments', HF_SEGMENT_COLUMNS, segments, building));
        if (subagents.rows > 0) configs.push(await config('subagents', 'subagents', HF_SUBAGENT_COLUMNS, subagents, building));
        const runs = [...facts.runs].sort();
        const title = o.title ?? (runs.length === 1 ? runs[0]! : basename(o.output));
        await writeFile(join(building, 'README.md'), datasetCard({ title, rollerVersion, configs, samples: facts.samples, excluded: facts.excluded, harnesses: facts.harnesses, models: facts.models, runs }));
        return configs.reduce((n, c) => n + c.rows, 0);
      });
      ctx.counters.add(name, 'received', facts.samples);
      ctx.counters.add(name, 'emitted', rows);
      return { name, received: facts.samples, written: facts.contributed };
    },
  };
}

async function config(name: DatasetConfig['name'], dir: string, columns: Columns, shards: ShardedParquet, root: string): Promise<DatasetConfig> {
  const rows = shards.rows;
  const dataBytes = shards.jsonBytes;
  const files = await shards.finish();
  return { name, dir, columns, rows, dataBytes, shards: await Promise.all(files.map(async (f) => ({ name: relative(root, f), bytes: await fileBytes(f) }))) };
}

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

/** Why a sample gave no record, as sft.jsonl's policy decides it (seeds/003 §4.4). */
function exclusionOf(sample: FinishedSample): string {
  const { status, runtime } = sample.info;
  if (status !== 'ok' && status !== 'skipped') return `status ${status}`;
  const eligibility = runtime?.sft_eligibility;
  if (eligibility && !eligibility.eligible) return `not eligible: ${eligibility.reason ?? 'no reason recorded'}`;
  return 'no SFT record (runtime.trajectory_conversion says why)';
}
