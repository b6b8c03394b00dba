import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { openFileOutput, type OpenOutput } from '../../core/output.js';
import { buildDirectory } from '../../core/built-directory.js';
import type { Columns } from '../../core/parquet/columns.js';
import { PlainParquetShards } from '../../core/parquet/plain-shards.js';
import type { Sink, SinkReport, StageContext } from '../../core/stage.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import type { Manifest } from '../../schemas/manifest.js';
import { callIds } from '../../transforms/capture/token-continuity.js';
import { sampleLocation } from '../sample-location.js';

export const RlRolloutsOptions = z
  .strictObject({
    output: z.string().min(1).describe('the directory of the rollouts table (made; refused when it exists and is not empty)'),
    max_shard_bytes: z.number().int().positive().default(64 << 20).describe('a file is closed once it passes this many bytes'),
  })
  .describe('one row per model call of every agent whose server returned token ids: prompt and completion ids, log-probabilities, a loss mask, the agent and its parent, the sample\'s grade and reward, the continuity finding (<output>/rollouts/rollouts-0000N-of-0000M.parquet)');
export type RlRolloutsOptions = z.input<typeof RlRolloutsOptions>;

/** The columns, and what TRL and verl read them as: docs/commands/export.md. */
export const RL_COLUMNS: Columns = [
  ['run', 'string'],
  ['sample', 'string'],
  ['task_id', 'string'],
  ['index', 'int32'],
  ['model', 'string'],
  ['harness', 'string'],
  ['participant_id', 'string'],
  ['parent_participant_id', 'string'],
  ['role', 'string'],
  ['depth', 'int32'],
  ['call_id', 'string'],
  ['seq', 'int64'],
  ['response_id', 'string'],
  ['finish_reason', 'string'],
  ['prompt_token_ids', { list: 'int32' }],
  ['completion_token_ids', { list: 'int32' }],
  ['logprobs', { list: 'float64' }],
  ['loss_mask', { list: 'int32' }],
  ['status', 'string'],
  ['grade', 'string'],
  ['reward', 'float64'],
  ['continuity', 'string'],
  ['continuity_break_at', 'int64'],
  ['continuity_reason', 'string'],
];

type Json = Record<string, any>;

/**
 * `roller export --format rl`: the run's model calls as RL rollouts, one row per call with token ids, in request order
 * then call order; prompts expanded from their stored prefixes (one id list per agent held, never the calls). Built
 * beside OUTPUT and renamed into it at the end. `written`: rows.
 */
export function createRlRolloutsSink(options: RlRolloutsOptions, open: OpenOutput = openFileOutput): Sink<FinishedSample> {
  const o = RlRolloutsOptions.parse(options);
  const name = 'rl-rollouts';
  return {
    name,
    async consume(input: AsyncIterable<FinishedSample>, ctx: StageContext): Promise<SinkReport> {
      let received = 0;
      let rows = 0;
      await buildDirectory(o.output, 'the RL rollouts', async (building) => {
        // Written directly (PlainParquetFile): each row's ids are copied as one block, not converted id by id.
        const rollouts = new PlainParquetShards({ dir: join(building, 'rollouts'), prefix: 'rollouts', columns: RL_COLUMNS, maxShardBytes: o.max_shard_bytes, open, signal: ctx.signal });
        try {
          for await (const sample of abortableInput(input, ctx.signal)) {
            received++;
            for await (const row of sampleRows(sample)) {
              await rollouts.add(row);
              rows++;
            }
          }
          await rollouts.finish();
        } catch (err) {
          await rollouts.abandon();
          throw err;
        }
      });
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', rows);
      return { name, received, written: rows };
    },
  };
}

async function* sampleRows(s: FinishedSample): AsyncGenerator<Json> {
  const where = sampleLocation(s.dir);
  const i = s.info;
  const people = new Map(((i.runtime?.participants ?? []) as Json[]).map((p) => [String(p.participant), p]));
  const breaks = await continuityBreaks(s);
  const reward = typeof i.grade?.scores?.reward === 'number' ? i.grade.scores.reward : null;
  const full = new Map<string, Uint32Array>();
  for await (const c of s.calls()) {
    if (!c.token_ids?.prompt) continue;
    const whole = callIds(c.token_ids, (id) => full.get(id));
    if (!whole) continue;
    // Views of the call's ids: the row and the next call's prefix share one block.
    const prompt = whole.ids.subarray(0, whole.promptLength);
    const completion = whole.ids.subarray(whole.promptLength);
    const prefix = c.token_ids.prompt_prefix;
    // Continuous: the whole previous call (prompt + completion) is this prompt's stored prefix; first: a chain starts.
    const continued = prefix !== undefined && full.get(prefix.call_id)?.length === prefix.length;
    // Each call is the stored prefix of at most the next call of its agent: once used, its ids go (memory stays flat).
    if (prefix) full.delete(prefix.call_id);
    full.set(c.call_id, whole.ids);
    const p = c.participant_id ? people.get(c.participant_id) : undefined;
    const brk = breaks.get(c.call_id);
    yield {
      ...where,
      task_id: i.task_id,
      index: i.index,
      model: i.model,
      harness: i.harness?.name ?? null,
      participant_id: c.participant_id,
      parent_participant_id: p?.parent ?? null,
      role: p?.role ?? null,
      depth: p?.depth ?? null,
      call_id: c.call_id,
      seq: c.seq,
      response_id: c.response_id,
      finish_reason: ((c.output as Json | null)?.choices?.[0]?.finish_reason as string | undefined) ?? null,
      prompt_token_ids: prompt,
      completion_token_ids: completion,
      logprobs: c.logprobs ? Float64Array.from(c.logprobs.content, (e) => Number(e.logprob)) : null,
      // Every completion id was sampled by the model: all of them are trained on.
      loss_mask: new Int32Array(completion.length).fill(1),
      status: i.status,
      grade: i.grade?.status ?? null,
      reward,
      continuity: brk ? 'break' : continued ? 'continuous' : 'first',
      continuity_break_at: brk?.at_token ?? null,
      continuity_reason: brk?.reason ?? null,
    };
  }
}

/** The continuity audit's breaks of the sample's capture, by call. */
async function continuityBreaks(s: FinishedSample): Promise<Map<string, { at_token: number; reason: string }>> {
  const path = s.info.runtime?.capture?.path;
  if (!path) return new Map();
  const manifest = JSON.parse(await readFile(join(s.dir, path, 'manifest.json'), 'utf8').catch(() => '{}')) as Partial<Manifest>;
  return new Map((manifest.token_continuity?.breaks ?? []).map((b) => [b.call_id, b]));
}
