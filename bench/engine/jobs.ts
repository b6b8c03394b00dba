/**
 * The four jobs the engine bench compares, each over the same JSONL bytes:
 *   (a) parse limit: byte line split (Buffer indexOf) + JSON.parse per line
 *   (b) hand-written job: (a) + 3 inline field transforms + one JSON.stringify + writes to 2 files
 *   (c) the engine doing (b): JSONL source → 3 transforms → encode once → fanOut to 2 JSONL sinks
 *   (d) the same stages driven through highland
 */
import { closeSync, createWriteStream, openSync, readSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import {
  createJsonlSink,
  createStageContext,
  encodeJsonlLines,
  fanOut,
  fromSource,
  jsonlValueSource,
  mapStage,
  runPipeline,
  through,
} from '../../src/index.js';

type Rec = Record<string, any>;

// The three transforms, shared by (b), (c) and (d) so that all do the same work.
export const tag = (r: Rec): Rec => {
  r.bench_tag = 'roller-bench';
  return r;
};
export const measure = (r: Rec): Rec => {
  r.output_chars = (r.output?.content?.[0]?.text as string | undefined)?.length ?? 0;
  return r;
};
export const strip = (r: Rec): Rec => {
  if (r.context) delete r.context.metadata;
  return r;
};

export interface JobResult {
  records: number;
  outputBytes: number;
}

const CHUNK = 1 << 20;

/**
 * The byte splitter every hand-written variant uses: readSync 1 MiB into one reused buffer,
 * indexOf('\n'), JSON.parse each line. The fastest plain loop measured here (reading into a reused
 * buffer and parsing at once keeps the bytes in cache), so the limit is an honest one.
 */
async function forEachLine(path: string, onRecord: (value: Rec) => void | Promise<void>): Promise<number> {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(CHUNK);
  let records = 0;
  try {
    let carry: Buffer | undefined;
    for (;;) {
      const bytesRead = readSync(fd, buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      let chunk = buf.subarray(0, bytesRead);
      if (carry) {
        chunk = Buffer.concat([carry, chunk]);
        carry = undefined;
      }
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl === -1) break;
        if (nl > start) {
          const p = onRecord(JSON.parse(chunk.toString('utf8', start, nl)) as Rec);
          if (p) await p;
          records++;
        }
        start = nl + 1;
      }
      if (start < chunk.length) carry = Buffer.from(chunk.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
  return records;
}

export async function parseLimit(input: string): Promise<JobResult> {
  let sink = 0;
  const records = await forEachLine(input, (r) => {
    sink += (r.seq as number) & 1; // keep the parse observable
  });
  return { records: records + (sink & 0), outputBytes: 0 };
}

function fileOut(path: string): WriteStream {
  return createWriteStream(path, { highWaterMark: 1 << 20 });
}

async function endAll(...outs: WriteStream[]): Promise<void> {
  await Promise.all(
    outs.map((o) => {
      o.end();
      return once(o, 'finish');
    }),
  );
}

export async function handWritten(input: string, outA: string, outB: string): Promise<JobResult> {
  const a = fileOut(outA);
  const b = fileOut(outB);
  let outputBytes = 0;
  const records = await forEachLine(input, async (r) => {
    // One stringify and one UTF-8 encode, the same bytes to both files: the best a careful hand-written
    // loop does, so that c/b measures the engine's own overhead and nothing else.
    const line = Buffer.from(`${JSON.stringify(strip(measure(tag(r))))}\n`, 'utf8');
    outputBytes += line.length;
    // Listen for both drains before awaiting either: a drain that fires while we wait on the other
    // would otherwise be missed, and the loop would wait forever (the process just exits).
    const waits: Promise<unknown>[] = [];
    if (!a.write(line)) waits.push(once(a, 'drain'));
    if (!b.write(line)) waits.push(once(b, 'drain'));
    if (waits.length > 0) await Promise.all(waits);
  });
  await endAll(a, b);
  return { records, outputBytes };
}

const stages = () => [mapStage('tag', tag), mapStage('measure', measure), mapStage('strip', strip)] as const;

export async function engine(input: string, outA: string, outB: string): Promise<JobResult> {
  const report = await runPipeline({
    name: 'bench-engine',
    source: jsonlValueSource<Rec>(input),
    transforms: [...stages(), encodeJsonlLines],
    // sha256 off: job (b) does not hash either; the engine's default (on) is measured separately.
    sinks: [createJsonlSink({ path: outA, sha256: false }), createJsonlSink({ path: outB, sha256: false })],
  });
  return { records: report.sinks[0]!.written, outputBytes: report.sinks[0]!.bytes ?? 0 };
}

export async function engineHashed(input: string, outA: string, outB: string): Promise<JobResult> {
  const report = await runPipeline({
    name: 'bench-engine-sha256',
    source: jsonlValueSource<Rec>(input),
    transforms: [...stages(), encodeJsonlLines],
    sinks: [createJsonlSink({ path: outA }), createJsonlSink({ path: outB })],
  });
  return { records: report.sinks[0]!.written, outputBytes: report.sinks[0]!.bytes ?? 0 };
}

export async function viaHighland(input: string, outA: string, outB: string): Promise<JobResult> {
  const ctx = createStageContext();
  const [t1, t2, t3] = stages();
  const sinks = fanOut([createJsonlSink({ path: outA, sha256: false }), createJsonlSink({ path: outB, sha256: false })]);
  const reports = await fromSource(jsonlValueSource<Rec>(input), ctx)
    .through(through(t1, ctx))
    .through(through(t2, ctx))
    .through(through(t3, ctx))
    .through(through(encodeJsonlLines, ctx))
    .through(through(sinks, ctx))
    .collect()
    .toPromise(Promise);
  const report = reports[0]!;
  return { records: report.written, outputBytes: report.branches?.[0]?.bytes ?? 0 };
}

export const jobs = {
  a: { label: '(a) parse limit: split + JSON.parse', run: (i: string) => parseLimit(i) },
  b: { label: '(b) hand-written: + 3 transforms, stringify, 2 files', run: handWritten },
  c: { label: '(c) engine: source → 3 stages → fanOut(2 sinks)', run: engine },
  'c+sha': { label: '(c) engine with sha256 of both outputs', run: engineHashed },
  d: { label: '(d) the same stages through highland', run: viaHighland },
} as const;
export type JobName = keyof typeof jobs;
