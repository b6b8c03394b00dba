/**
 * Every registered sink (src/sinks/index.ts) passes the shipped conformance suite (agent-roller/testing): empty input,
 * flush at end, a throwing input, abort, counts, the stall test. A sink added to the registry without an entry here
 * fails the first test.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { PLAIN_GROUP_ROWS } from '../../src/core/parquet/plain-shards.js';
import { finishedSample } from '../../src/pipelines/finished-sample.js';
import type { Call, Relation, SampleInfo } from '../../src/schemas/index.js';
import { sftRecordOfRow, sinks, type SinkName } from '../../src/sinks/index.js';
import { describeSinkConformance, type ConformanceEnv, type SinkUnderTest } from '../../src/testing/sink-conformance.js';
import { startReceiver } from '../support/otlp-receiver.js';
import { recordExamples } from '../support/record-examples.js';

type Json = Record<string, any>;

async function jsonl(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
}

/** A document sink's file: what it holds last (each item replaces the one before), or nothing. */
async function lastDocument(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? [] : [JSON.parse(text) as unknown];
}

const call = (i: number): Call => ({ ...(recordExamples.call as Call), call_id: `c-conf-${i}`, seq: i });
const responsesCall = (i: number): Call => ({ ...(recordExamples.call as Call), call_id: `c-conf-${i}`, seq: i, protocol: 'openai-responses', context: { model: 'm', input: [], tools: [{ type: 'function', name: `t${i}` }] } });
const doc = (kind: keyof typeof recordExamples) => (i: number) => ({ ...(recordExamples[kind] as Json), conformance_item: i });
/** A document sink of one file: 500 items replace each other, the last stays. */
const documentSink = <T>(name: SinkName, file: string, item: (i: number) => T, options: (env: ConformanceEnv) => Json = (env) => ({ path: join(env.dir, file) })): SinkUnderTest<T> => ({
  create: (env) => (sinks[name].create as (o: unknown, open: unknown) => never)(options(env), env.open),
  item,
  readBack: (env) => lastDocument(join(env.dir, file)),
  expected: (items) => (items.length === 0 ? [] : [JSON.parse(JSON.stringify(items.at(-1)))]),
  capacity: 1,
});
const jsonlSink = <T>(name: SinkName, file: string, item: (i: number) => T, expected: (items: T[]) => unknown[] = (items) => items.map((x) => JSON.parse(JSON.stringify(x)) as unknown)): SinkUnderTest<T> => ({
  create: (env) => (sinks[name].create as (o: unknown, open: unknown) => never)({ path: join(env.dir, file) }, env.open),
  item,
  readBack: (env) => jsonl(join(env.dir, file)),
  expected,
  capacity: 1,
});
/** A finished sample whose SFT lines are already encoded (a sample stream's item, no files needed). */
const sample = (kind: 'linear' | 'segments' | 'subagents') => (i: number) =>
  finishedSample(`/nonexistent/${i}`, { index: i, status: 'ok' } as unknown as SampleInfo, {
    linear: kind === 'linear' ? Buffer.from(`{"i":${i}}\n`) : null,
    segments: kind === 'segments' ? Buffer.from(`{"i":${i},"s":1}\n`) : null,
    subagents: kind === 'subagents' ? Buffer.from(`{"i":${i},"a":1}\n{"i":${i},"a":2}\n`) : null,
  });

/** Every row of a Parquet directory's files (name order), as plain values: hyparquet, not the writer (DuckDB). */
async function parquetRows(dir: string): Promise<Json[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.parquet')).sort();
  const rows: Json[] = [];
  for (const n of names) {
    const bytes = await readFile(join(dir, n));
    rows.push(...((await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer })) as Json[]));
  }
  return rows;
}
const sftRecord = (i: number) => ({ messages: [{ role: 'user', content: `task ${i}` }, { role: 'assistant', reasoning_content: '', content: `done ${i}`, tool_calls: [] }], tools: [] });
/** A finished sample of an ok run whose linear SFT record is already encoded (no files needed). */
const trainingSample = (i: number) =>
  finishedSample(`/nonexistent/run/samples/m/${String(i).padStart(4, '0')}_t`, { index: i, task_id: `t${i}`, model: 'm', status: 'ok', harness: { name: 'claude-code', version: '1' }, usage: null, runtime: {} } as unknown as SampleInfo, {
    linear: Buffer.from(`${JSON.stringify(sftRecord(i))}\n`),
    segments: null,
  });

const UNDER_TEST: Partial<Record<SinkName, SinkUnderTest<any>>> = {
  'calls-jsonl': jsonlSink('calls-jsonl', 'calls.jsonl', call),
  relations: jsonlSink('relations', 'relations.jsonl', (i) => ({ ...(recordExamples.relation as Relation), relation_id: `r-conf-${i}` })),
  trace: jsonlSink('trace', 'trace.jsonl', (i) => ({ type: 'assistant', uuid: `u${i}`, message: { id: `m${i}` } })),
  'capture-manifest': {
    create: (env) => sinks['capture-manifest'].create({ dir: env.dir }, env.open),
    item: (i) => ({ manifest: { ...(recordExamples.manifest as Json), attempt: i + 1 }, files: [] }),
    readBack: (env) => lastDocument(join(env.dir, 'manifest.json')),
    expected: (items: { manifest: Json }[]) => (items.length === 0 ? [] : [{ ...items.at(-1)!.manifest, files: {} }]),
    capacity: 1,
  },
  actf: documentSink('actf', 'trace_ACTF.json', doc('actf')),
  sft: documentSink('sft', 'trace_SFT.json', doc('sft')),
  'sample-info': documentSink('sample-info', 'info.json', doc('sample-info')),
  'run-info': documentSink('run-info', 'info.json', doc('run-info')),
  'run-lock': documentSink('run-lock', 'lock.json', doc('lock')),
  usage: documentSink('usage', 'usage.json', (i) => ({ schema: 'roller.usage/v1', i })),
  conversion: documentSink('conversion', 'conversion.json', (i) => ({ raw_schema: 'x', i })),
  'sft-segments': {
    create: (env) => sinks['sft-segments'].create({ dir: env.dir }, env.open),
    item: (i) => ({ meta: { path: `sft_segments/${String(i).padStart(4, '0')}.json` }, record: { ...(recordExamples['sft-segment'] as Json), i } }),
    readBack: async (env) => {
      const names = (await readdir(join(env.dir, 'sft_segments')).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
      return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(env.dir, 'sft_segments', n), 'utf8')) as unknown));
    },
    expected: (items: { record: Json }[]) => items.map((x) => x.record),
    capacity: 1,
  },
  'run-sft': jsonlSink('run-sft', 'sft.jsonl', sample('linear'), (items) => items.map((s) => ({ i: s.index }))),
  'run-sft-segments': jsonlSink('run-sft-segments', 'sft_segments.jsonl', sample('segments'), (items) => items.map((s) => ({ i: s.index, s: 1 }))),
  // Each sample's sub-agents (two here), samples in order.
  'run-sft-subagents': jsonlSink('run-sft-subagents', 'sft_subagents.jsonl', sample('subagents'), (items) => items.flatMap((s) => [{ i: s.index, a: 1 }, { i: s.index, a: 2 }])),
  'wire-trace': {
    create: (env) => sinks['wire-trace'].create({ path: join(env.dir, 'wire_trace.jsonl'), mode: 'full' }, env.open),
    item: call,
    readBack: async (env) => (await jsonl(join(env.dir, 'wire_trace.jsonl'))).map((w) => (w as Json).call_id),
    expected: (items: Call[]) => items.map((c) => c.call_id),
    capacity: 1,
  },
  'tools-capture': {
    create: (env) => sinks['tools-capture'].create({ path: join(env.dir, 'tools_capture.jsonl') }, env.open),
    item: responsesCall,
    readBack: async (env) => (await jsonl(join(env.dir, 'tools_capture.jsonl'))).map((w) => (w as Json).tools),
    expected: (items: Call[]) => items.map((c) => (c.context as Json).tools),
    capacity: 1,
  },
  atif: {
    create: (env) => sinks.atif.create({ output: env.dir }, env.open),
    item: (i) => ({ rel: `m/${i}_t`, trajectory: { schema_version: 'ATIF-v1.7', i }, images: [] }),
    readBack: async (env) => {
      const dirs = (await readdir(join(env.dir, 'm')).catch(() => [] as string[])).filter((d) => !d.endsWith('.partial'));
      const docs = await Promise.all(dirs.map(async (d) => JSON.parse(await readFile(join(env.dir, 'm', d, 'trajectory.json'), 'utf8')) as Json));
      return docs.sort((a, b) => a.i - b.i);
    },
    expected: (items: { trajectory: Json }[]) => items.map((x) => x.trajectory),
    capacity: 1,
  },
};

UNDER_TEST['hf-dataset'] = {
  create: (env) => sinks['hf-dataset'].create({ output: join(env.dir, 'hf') }, env.open),
  item: trainingSample,
  readBack: async (env) => (await parquetRows(join(env.dir, 'hf', 'data'))).map((r) => sftRecordOfRow(r as never)),
  expected: (items: { index: number }[]) => items.map((s) => sftRecord(s.index)),
  capacity: 1,
};
UNDER_TEST['parquet-tables'] = {
  create: (env) => sinks['parquet-tables'].create({ output: join(env.dir, 'tables') }, env.open),
  item: trainingSample,
  readBack: async (env) => (await parquetRows(join(env.dir, 'tables', 'samples'))).map((r) => r.task_id),
  expected: (items: { index: number }[]) => items.map((s) => `t${s.index}`),
  capacity: 1,
};

UNDER_TEST['rl-rollouts'] = {
  create: (env) => sinks['rl-rollouts'].create({ output: join(env.dir, 'rl') }, env.open),
  // A sample with one call whose server returned token ids: one rollout row.
  item: (i: number) => ({ ...trainingSample(i), calls: async function* () { yield { ...call(i), participant_id: null, token_ids: { prompt: [1, 2, i], completion: [i, 9] }, logprobs: null }; } }),
  readBack: async (env) => (await parquetRows(join(env.dir, 'rl', 'rollouts'))).map((r) => [r.task_id, (r.prompt_token_ids as bigint[]).map(Number), (r.completion_token_ids as bigint[]).map(Number)]),
  expected: (items: { index: number }[]) => items.map((s) => [`t${s.index}`, [1, 2, s.index], [s.index, 9]]),
  // Rows are held until a row group is full (or holds 8 MB of values): one row per item here.
  capacity: PLAIN_GROUP_ROWS,
};

/** The otlp sink's collector: a receiver decoding with OpenTelemetry's generated protobuf code. */
const receiver = await startReceiver();
afterAll(() => receiver.close());
UNDER_TEST.otlp = {
  create: () => {
    receiver.spans.length = 0;
    return sinks.otlp.create({ endpoint: receiver.url, batch_spans: 64 });
  },
  // A sample with one captured call: its trace is an agent span and a chat span.
  item: (i: number) => ({ ...trainingSample(i), calls: async function* () { yield { ...call(i), participant_id: null, ended_at: (recordExamples.call as Call).started_at }; } }),
  readBack: async () => receiver.spans.filter((s) => s.parentSpanId === '').map((s) => s.attributes['roller.index']),
  expected: (items: { index: number }[]) => items.map((s) => s.index),
  capacity: 1,
  outputs: 'own',
};

describe('the sink registry', () => {
  it('every registered sink is under the conformance suite here', () => {
    expect(Object.keys(UNDER_TEST).sort()).toEqual(Object.keys(sinks).sort());
  });
});

for (const [name, sut] of Object.entries(UNDER_TEST)) describeSinkConformance(name, sut!);
