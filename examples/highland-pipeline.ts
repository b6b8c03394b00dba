/**
 * A user's own script: read calls-like records from a JSONL file, keep the ones that matter, reshape
 * them, and write them to two files through a fan-out (serialized once). Every roller stage is a
 * plain async-iterable function; `fromSource()` gives a highland stream and `through()` lets highland
 * drive any stage.
 */
import {
  createJsonlSink,
  createStageContext,
  encodeJsonlLines,
  fanOut,
  fromSource,
  jsonlValueSource,
  mapStage,
  through,
  type SinkReport,
} from '../src/index.js';

interface CallLike {
  call_id: string;
  http_status: number | null;
  usage?: { normalized?: { output?: number } | null };
}

export async function summarizeCalls(input: string, outA: string, outB: string): Promise<SinkReport> {
  const ctx = createStageContext();
  const okOnly = mapStage('ok-only', (c: CallLike) => (c.http_status === 200 ? c : undefined));
  const summary = mapStage('summary', (c: CallLike) => ({ call_id: c.call_id, output_tokens: c.usage?.normalized?.output ?? 0 }));
  const sinks = fanOut([createJsonlSink({ path: outA }), createJsonlSink({ path: outB })]);

  const [report] = await fromSource(jsonlValueSource<CallLike>(input), ctx)
    .through(through(okOnly, ctx))
    .through(through(summary, ctx))
    .through(through(encodeJsonlLines, ctx))
    .through(through(sinks, ctx))
    .collect()
    .toPromise(Promise);
  return report as SinkReport;
}

// Run directly: node dist/examples/highland-pipeline.js calls.jsonl a.jsonl b.jsonl
if (process.argv[1]?.endsWith('highland-pipeline.js')) {
  const [input, a, b] = process.argv.slice(2);
  if (!input || !a || !b) throw new Error('usage: highland-pipeline.js IN.jsonl OUT_A.jsonl OUT_B.jsonl');
  summarizeCalls(input, a, b).then((r) => console.log(JSON.stringify(r)));
}
