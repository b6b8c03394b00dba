import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createJsonlSink, EncodedLine, fanOut } from '../../src/core/index.js';
import { describeSinkConformance } from '../../src/testing/sink-conformance.js';

const record = (i: number) => ({ i, text: `record ${i} ✓`, nested: { ok: i % 2 === 0 } });

async function readJsonlFile(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
}

describeSinkConformance('jsonl (objects)', {
  create: (env) => createJsonlSink({ path: join(env.dir, 'out.jsonl'), open: env.open }),
  item: record,
  readBack: (env) => readJsonlFile(join(env.dir, 'out.jsonl')),
  expected: (items) => items,
  // The sink holds the one item whose write is pending; the destination's own buffer is 1 byte.
  capacity: 1,
});

describeSinkConformance('jsonl (pre-encoded lines)', {
  create: (env) => createJsonlSink({ path: join(env.dir, 'out.jsonl'), open: env.open }),
  item: (i) => EncodedLine.of(record(i)),
  readBack: (env) => readJsonlFile(join(env.dir, 'out.jsonl')),
  expected: (items) => items.map((l) => JSON.parse((l as EncodedLine).bytes.toString('utf8')) as unknown),
  capacity: 1,
});

const FANOUT_ITEMS = 4;
describeSinkConformance('fanOut into two jsonl sinks', {
  create: (env) =>
    fanOut(
      [createJsonlSink({ path: join(env.dir, 'a.jsonl'), open: env.open }), createJsonlSink({ path: join(env.dir, 'b.jsonl'), open: env.open })],
      { capacity: { items: FANOUT_ITEMS } },
    ),
  item: (i) => EncodedLine.of(record(i)),
  readBack: async (env) => {
    const files = (await readdir(env.dir)).sort();
    if (files.length === 0) return [];
    const [a, b] = await Promise.all(['a.jsonl', 'b.jsonl'].map((f) => readJsonlFile(join(env.dir, f))));
    // Both branches must have written the same records.
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('branches differ');
    return a!;
  },
  expected: (items) => items.map((l) => JSON.parse((l as EncodedLine).bytes.toString('utf8')) as unknown),
  // Each branch holds its pending item plus a full queue; the producer waits before pulling more.
  capacity: FANOUT_ITEMS + 1,
});
