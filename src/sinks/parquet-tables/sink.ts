import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { openFileOutput, type OpenOutput } from '../../core/output.js';
import type { Columns } from '../../core/parquet/columns.js';
import { buildParquetDirectory } from '../../core/parquet/parquet-directory.js';
import type { Sink, SinkReport, StageContext } from '../../core/stage.js';
import type { FinishedSample } from '../../schemas/finished-sample.js';
import { sampleLocation } from '../sample-location.js';
import { callRow, participantRows, relationRow, sampleRow, TABLE_COLUMNS, type TableName } from './tables.js';

export const ParquetTablesOptions = z
  .strictObject({
    output: z.string().min(1).describe('the directory of the tables (made; refused when it exists and is not empty)'),
    max_shard_bytes: z.number().int().positive().default(64 << 20).describe("a table's file is closed before its rows' JSON passes this many bytes"),
  })
  .describe("the run's samples, participants, calls and relations as Parquet tables (<output>/<table>/<table>-00000-of-0000N.parquet), with the columns of roller query's views");
export type ParquetTablesOptions = z.input<typeof ParquetTablesOptions>;

export const PARQUET_TABLES = Object.keys(TABLE_COLUMNS) as TableName[];

/**
 * The tables of `roller query` as Parquet files, over the sample stream (request order): each sample's row, its
 * participants, its published calls (read one at a time, never their bodies) and relations. Built beside OUTPUT and
 * renamed into it at the end: a failed or aborted export leaves nothing. `written`: samples.
 */
export function createParquetTablesSink(options: ParquetTablesOptions, open: OpenOutput = openFileOutput): Sink<FinishedSample> {
  const o = ParquetTablesOptions.parse(options);
  const name = 'parquet-tables';
  return {
    name,
    async consume(input: AsyncIterable<FinishedSample>, ctx: StageContext): Promise<SinkReport> {
      let received = 0;
      const tables = Object.fromEntries(PARQUET_TABLES.map((t) => [t, { prefix: t, columns: TABLE_COLUMNS[t] as Columns }])) as unknown as Record<TableName, { prefix: string; columns: Columns }>;
      await buildParquetDirectory({ output: o.output, what: 'the Parquet tables', tables, maxShardBytes: o.max_shard_bytes, open, signal: ctx.signal }, async (t) => {
        for await (const sample of abortableInput(input, ctx.signal)) {
          received++;
          const where = sampleLocation(sample.dir);
          await t.samples.add(sampleRow(where, sample));
          for (const p of participantRows(where, sample)) await t.participants.add(p);
          for await (const c of sample.calls()) await t.calls.add(callRow(where, c));
          for (const r of await sample.relations()) await t.relations.add(relationRow(where, r));
        }
        for (const name of PARQUET_TABLES) await t[name].finish();
      });
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', received);
      return { name, received, written: received };
    },
  };
}
