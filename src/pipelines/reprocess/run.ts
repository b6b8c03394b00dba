import { createHash } from 'node:crypto';
import { z } from 'zod';
import { existsSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { itemsOf } from '../../core/document-sink.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { InOrder } from '../../core/in-order.js';
import { removeDeadTempsIn } from '../../core/dead-leftovers.js';
import { ensurePrivateDir } from '../../core/private-dir.js';
import { acquireLock, describeHolder, inspectLock } from '../../core/process-lock.js';
import { Lock } from '../../schemas/lock.js';
import { runSummary } from '../run-summary.js';
import { readChecked } from '../run-reader.js';
import { runUsageTotals } from '../run-usage.js';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import { createRunInfoSink } from '../../sinks/run-info/sink.js';
import { createRunLockSink } from '../../sinks/run-lock/sink.js';
import type { SinkFailure, UserSinks } from '../../sinks/user-sink.js';
import { RUN_LOCK_FILE } from '../collect/run-dir.js';
import { finishedSample, type FinishedSample, type SampleSftLines } from '../finished-sample.js';
import { runSampleSinks, type RunSamplesOutcome } from '../run-samples.js';
import { openUserSinks, refuseCallSinksWithoutCalls, sinkDeadlines, type SinkSpec } from '../user-sinks.js';
import { findHarness, isShippedAdapter } from '../../harnesses/index.js';
import { InThreadPool, SamplePool, type Projector } from './pool.js';
import { TrainingTally } from '../collect/training-summary.js';
import { inShard, runLockDigest, type Shard } from '../scale/shard.js';
import type { ReprocessTarget } from './targets.js';

export interface ReprocessOptions {
  /** A run directory (info.json of a run) or one sample directory of a run. */
  input: string;
  /** The new run tree. */
  output: string;
  concurrency?: number;
  only?: ReprocessTarget[] | null;
  /** Decode calls again from each capture's wire log (SampleJob.fromWire). */
  fromWire?: boolean;
  /** Skip checking each sample's published capture (hashes, attribution, references) before use (--no-verify). */
  noVerify?: boolean;
  rollerVersion?: string;
  /** Sinks of a user's own (as collect's): they get the output's attributed calls and finished samples, in request order. */
  sinkSpecs?: SinkSpec[];
  sinks?: UserSinks[];
  /** --sink-timeout: seconds a user sink may take over one item, and to finish (default 120). */
  sinkTimeoutS?: number;
  onSample?(row: ReprocessRow, progress: { done: number; total: number }): void;
  /** --shard I/N: only the samples whose request index ≡ I (mod N), into a shard of the run (roller merge joins them). */
  shard?: Shard;
}

export interface ReprocessRow {
  /** The sample directory, relative to the run. */
  sample: string;
  status: 'written' | 'unchanged' | 'error';
  error?: { code: string; message: string };
}

export interface ReprocessReport {
  output: string;
  rows: ReprocessRow[];
  written: number;
  unchanged: number;
  errors: number;
  /** false when every sample was already there from the same source: nothing was written. */
  wroteRunFiles: boolean;
  /** User sinks that failed (the output's own files are complete regardless). */
  sinkFailures: SinkFailure[];
}

/** One line of <output>/reprocess.jsonl: the reprocess's own record (its times live here, not in the outputs). */
interface LogLine {
  sample: string;
  source_key: string;
  state: 'started' | 'finished' | 'failed';
  at: string;
  roller_version: string;
  /** false when the archive's published capture was not checked before use (--no-verify). */
  verified?: boolean;
  error?: { code: string; message: string };
}

export const REPROCESS_LOG = 'reprocess.jsonl';
/** Bytes of run-level SFT lines that finished ahead of their turn held in memory; past it they are read again at their turn. */
const HELD_BYTES = 64 * 2 ** 20;

/**
 * `roller reprocess RUN_DIR|SAMPLE_DIR --output DIR`: every sample of an archive projected again by the
 * stages collect uses, into a new run tree; the input is never modified. Samples run in parallel worker
 * threads (--concurrency); one that fails is an error row and the others go on. Idempotent: a sample
 * already reprocessed from the same source (same archived info.json and capture manifest, same roller) is
 * left alone and reported unchanged; an output that is there for any other reason — an earlier unfinished
 * or failed attempt, another source — is reported by path and never overwritten.
 */
export async function reprocess(o: ReprocessOptions): Promise<ReprocessReport> {
  const archived = await archiveSamples(o.input);
  const { runDir, samples, run } = o.shard ? await shardOf(archived, o.shard, o.input) : archived;
  const output = resolve(o.output);
  const archive = resolve(runDir);
  if (output === archive || output.startsWith(archive + sep)) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--output ${o.output} is inside the archive ${runDir}: reprocess writes a new run tree beside it and never modifies its input`);
  }
  const archiveLock = await readChecked(Lock, join(runDir, 'lock.json'), 'run lock (lock.json)');
  if (o.shard && archiveLock.part) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--shard: ${runDir} is itself a part of a run (${archiveLock.part.kind}); reprocess the merged run in shards, or this part whole`);
  // A shard's lock names the whole run and the shard, as collect --shard writes it.
  const lock: Lock = o.shard ? { ...archiveLock, part: { kind: 'shard', index: o.shard.index, count: o.shard.count, run_lock_digest: runLockDigest(archiveLock) } } : archiveLock;
  const version = o.rollerVersion ?? '0.1.0';
  // An archive still being collected is not read; an output another process writes into is not written.
  const collecting = await inspectLock(join(runDir, RUN_LOCK_FILE));
  if (collecting?.alive === 'yes') throw new RollerError(ErrorCode.RUN_LOCKED, `the archive ${runDir} is being collected by ${describeHolder(collecting.holder)}; reprocess it once that run has ended`);
  await ensurePrivateDir(output, 'the reprocess output');
  const held = await acquireLock(join(output, RUN_LOCK_FILE), { what: `the reprocess output ${output}`, command: 'roller reprocess', takeOverStale: true, staleHint: '' });
  // A killed reprocess's half-written run files (sft.jsonl.PID.tmp, …) go, whether or not this one rewrites them.
  await removeDeadTempsIn(output);
  try {
    return await reprocessLocked(o, { runDir, samples, run, output, lock, version });
  } finally {
    await held.release();
  }
}

async function reprocessLocked(o: ReprocessOptions, { runDir, samples, run, output, lock, version }: { runDir: string; samples: string[]; run: RunInfo; output: string; lock: Lock; version: string }): Promise<ReprocessReport> {
  const user = await openUserSinks(o.sinkSpecs ?? [], o.sinks ?? [], process.cwd(), sinkDeadlines(o.sinkTimeoutS));
  // An archive collected without --capture-calls has no calls to reprocess.
  if (!lock.options.capture_calls) await refuseCallSinksWithoutCalls(user, 'the archive was collected without --capture-calls; collect it again with it');
  const out = new OutputSamples(output, run, user);
  const rowOf = new Map(run.samples.map((r, j) => [join(runDir, r.path), j]));
  const processed = new Set(samples.map((s) => rowOf.get(s)));
  for (let j = 0; j < run.samples.length; j++) if (!processed.has(j)) await out.settle(j);
  const logPath = join(output, REPROCESS_LOG);
  const prior = await readLog(logPath);

  // Rows by sample index (request order); reported as they finish.
  const byIndex: ReprocessRow[] = new Array(samples.length);
  let done = 0;
  const report = (i: number, row: ReprocessRow) => {
    byIndex[i] = row;
    o.onSample?.(row, { done: ++done, total: samples.length });
  };
  // One lane per worker, each taking the next sample when it is free: at most `lanes` samples in flight,
  // however large the archive.
  const lanes = Math.max(1, Math.min(o.concurrency ?? 1, samples.length || 1));
  // A harness a script registered lives in this thread only: its samples are projected here.
  const registered = findHarness(lock.harness.name);
  const pool: Projector = registered && !isShippedAdapter(registered) ? new InThreadPool() : new SamplePool(lanes);
  const sample: SampleRun = { o, runDir, output, lock, version, pool, prior, log: (line) => appendFile(logPath, `${JSON.stringify(line)}\n`) };
  let next = 0;
  try {
    await Promise.all(Array.from({ length: lanes }, async () => {
      while (next < samples.length) {
        const i = next++;
        // A sample whose archive cannot even be read (info.json gone, unreadable) is an error row too.
        const lines = await reprocessOne(samples[i]!, sample, (row) => report(i, row)).catch((err: Error & { code?: string }) =>
          void report(i, { sample: relative(runDir, samples[i]!).split(sep).join('/'), status: 'error', error: { code: typeof err.code === 'string' ? err.code : ErrorCode.REPROCESS_FAILED, message: err.message } }),
        );
        const row = rowOf.get(samples[i]!);
        if (row !== undefined) await out.settle(row, lines);
      }
    }));
  } catch (err) {
    await out.abandon();
    throw err;
  } finally {
    await pool.close();
  }
  const rows = byIndex.filter(Boolean);
  const written = rows.filter((r) => r.status === 'written').length;
  // Nothing written and the output already a run: its files stay as they are (a second reprocess writes nothing).
  const wroteRunFiles = written > 0 || !existsSync(join(output, 'info.json'));
  const outcome = await out.finish(wroteRunFiles);
  if (wroteRunFiles && outcome) await writeRunFiles(output, lock, run, outcome, rows, o.shard);
  return {
    output,
    rows,
    written,
    unchanged: rows.filter((r) => r.status === 'unchanged').length,
    errors: rows.filter((r) => r.status === 'error').length,
    wroteRunFiles,
    sinkFailures: outcome?.sinkFailures ?? [],
  };
}

/** What projecting one sample of the run needs. */
interface SampleRun {
  o: ReprocessOptions;
  runDir: string;
  output: string;
  lock: Lock;
  version: string;
  pool: Projector;
  /** reprocess.jsonl as the last reprocess left it, by sample. */
  prior: Map<string, LogLine>;
  log(line: LogLine): Promise<void>;
}

/**
 * One sample: unchanged when the output holds it from the same source, refused when the output holds something
 * else, else projected by the pool (logged before and after). Its run-level SFT lines as the projection encoded
 * them when it wrote the sample; else undefined.
 */
async function reprocessOne(source: string, r: SampleRun, report: (row: ReprocessRow) => void): Promise<SampleSftLines | null | undefined> {
  const rel = relative(r.runDir, source).split(sep).join('/');
  const target = join(r.output, rel);
  const key = await sourceKey(source, r.version);
  const last = r.prior.get(rel);
  if (existsSync(target) || existsSync(`${target}.partial`)) {
    if (existsSync(target) && last?.state === 'finished' && last.source_key === key) return void report({ sample: rel, status: 'unchanged' });
    const what = existsSync(`${target}.partial`) ? `${target}.partial: an unfinished earlier output` : last?.state === 'failed' ? `${target}: an earlier failed output` : last?.state === 'started' ? `${target}: an unfinished earlier output` : `${target}: an output from another source`;
    return void report({ sample: rel, status: 'error', error: { code: ErrorCode.REPROCESS_OUTPUT_EXISTS, message: `${what} is there; it is not overwritten — remove it and run again` } });
  }
  const { o } = r;
  const unverified = o.noVerify ? { verified: false } : {};
  await r.log({ sample: rel, source_key: key, state: 'started', at: new Date().toISOString(), roller_version: r.version, ...unverified });
  const outcome = await r.pool.run({ source, target, lock: r.lock, only: o.only ?? null, sftLines: true, ...(o.fromWire ? { fromWire: true } : {}), ...(o.noVerify ? { noVerify: true } : {}) });
  await r.log({ sample: rel, source_key: key, state: outcome.status === 'written' ? 'finished' : 'failed', at: new Date().toISOString(), roller_version: r.version, ...unverified, ...(outcome.error ? { error: outcome.error } : {}) });
  report({ sample: rel, status: outcome.status, ...(outcome.error ? { error: outcome.error } : {}) });
  return outcome.status === 'written' ? outcome.sftLines : undefined;
}

/**
 * The output's sample stream in the archive's request order: its run-level SFT files (written as samples finish,
 * renamed into place at the end) and the user's sinks. A row not reprocessed this time (a sample directory given, or
 * one unchanged) contributes what the output holds for it; lines a projection encoded wait in memory up to
 * HELD_BYTES, past that their sample is read again at its turn.
 */
class OutputSamples {
  private readonly order: InOrder<FinishedSample>;
  private held = 0;
  private decide!: (replace: boolean) => void;
  private readonly keepRunFiles = new AbortController();
  private readonly stream: Promise<RunSamplesOutcome>;

  constructor(
    private readonly output: string,
    private readonly run: RunInfo,
    user: Awaited<ReturnType<typeof openUserSinks>>,
  ) {
    this.order = new InOrder<FinishedSample>(run.samples.length);
    // The stream's end waits for the decision whether the run's files are replaced at all (see wroteRunFiles).
    const decision = new Promise<boolean>((resolve) => (this.decide = resolve));
    const order = this.order;
    const keep = this.keepRunFiles;
    this.stream = runSampleSinks(
      output,
      (async function* () {
        yield* order;
        if (!(await decision)) keep.abort(new Error('nothing was reprocessed: the run files stay as they are'));
      })(),
      user,
      keep.signal,
    );
    this.stream.catch(() => {}); // awaited in finish()
  }

  /** Row j's place in the stream: its output sample (with the lines a projection encoded, when they fit). */
  async settle(j: number, encoded?: SampleSftLines | null): Promise<void> {
    this.order.settle(j, await this.fromOutput(j, encoded));
  }

  private async fromOutput(j: number, encoded?: SampleSftLines | null): Promise<FinishedSample | null> {
    const dir = join(this.output, this.run.samples[j]!.path);
    if (!existsSync(join(dir, 'info.json'))) return null;
    const info = JSON.parse(await readFile(join(dir, 'info.json'), 'utf8')) as SampleInfo;
    const size = (encoded?.linear?.length ?? 0) + (encoded?.segments?.length ?? 0);
    if (encoded === undefined || this.held + size > HELD_BYTES) return finishedSample(dir, info);
    this.held += size;
    return finishedSample(dir, info, encoded, () => (this.held -= size));
  }

  /** The stream's outcome; with replace false the run files are kept as they are (undefined). */
  async finish(replace: boolean): Promise<RunSamplesOutcome | undefined> {
    this.decide(replace);
    return this.stream.catch((err: unknown) => {
      if (this.keepRunFiles.signal.aborted) return undefined;
      throw err;
    });
  }

  /** A failure before the end: the stream ends without replacing the run files. */
  async abandon(): Promise<void> {
    this.order.settleRest();
    this.decide(false);
    await this.stream.catch(() => undefined);
  }
}

/** What reprocess reads of an archive's info.json before anything else (older rollers' files carry more or less). */
const InfoHead = z.looseObject({ schema: z.string().optional(), samples: z.array(z.looseObject({ path: z.string() })).optional() });

/** The samples of a run directory (its info.json rows), or the one sample a sample directory is. */
async function archiveSamples(given: string): Promise<{ runDir: string; samples: string[]; run: RunInfo }> {
  // Absolute: native paths in the outputs are made relative to the archive's raw/native/ by prefix.
  const input = resolve(given);
  const infoPath = join(input, 'info.json');
  if (!existsSync(infoPath)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${input}: no info.json; pass a run directory or a sample directory written by roller collect`);
  const info = (await readChecked(InfoHead, infoPath, 'info.json')) as { schema?: string; samples?: RunInfo['samples'] };
  if (info.schema === 'roller.run-info/v1') return { runDir: input, samples: (info.samples ?? []).map((r) => join(input, r.path)), run: info as RunInfo };
  if (info.schema === 'roller.sample-info/v1') {
    // <run>/samples/<model>/<index>_<task>
    const runDir = join(input, '..', '..', '..');
    if (!existsSync(join(runDir, 'lock.json'))) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${input}: a sample directory outside its run (no ${join(runDir, 'lock.json')}); reprocess needs the run's lock for its options`);
    return { runDir, samples: [join(runDir, relative(runDir, input))], run: (await readChecked(InfoHead, join(runDir, 'info.json'), "run's info.json")) as RunInfo };
  }
  throw new RollerError(ErrorCode.INVALID_OPTIONS, `${infoPath}: neither a run's nor a sample's info.json (schema ${info.schema ?? 'missing'})`);
}

/** The archive's samples in shard I of N (request index ≡ I mod N); a sample directory is no run to shard. */
async function shardOf(a: { runDir: string; samples: string[]; run: RunInfo }, shard: Shard, given: string): Promise<{ runDir: string; samples: string[]; run: RunInfo }> {
  if (a.samples.length === 1 && resolve(given) === a.samples[0]) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--shard: ${given} is one sample; pass the run directory`);
  const rows = a.run.samples.filter((r) => inShard(r.index, shard));
  const paths = new Set(rows.map((r) => join(a.runDir, r.path)));
  return { runDir: a.runDir, samples: a.samples.filter((s) => paths.has(s)), run: { ...a.run, samples: rows } };
}

/** Names the archive a sample's outputs derive from: its info.json and final capture manifest, and the roller doing it. */
async function sourceKey(sample: string, version: string): Promise<string> {
  const h = createHash('sha256').update(version).update('\0');
  const infoBytes = await readFile(join(sample, 'info.json'));
  h.update(infoBytes);
  const capture = (JSON.parse(infoBytes.toString('utf8')) as SampleInfo).runtime.capture;
  if (capture?.path && existsSync(join(sample, capture.path, 'manifest.json'))) h.update(await readFile(join(sample, capture.path, 'manifest.json')));
  return h.digest('hex');
}

/** The latest record of each sample in an earlier reprocess.jsonl. */
async function readLog(path: string): Promise<Map<string, LogLine>> {
  const out = new Map<string, LogLine>();
  if (!existsSync(path)) return out;
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    try {
      const l = JSON.parse(line) as LogLine;
      out.set(l.sample, l);
    } catch {
      // a line cut by a crash: that sample's state is unknown, so its output counts as unfinished
    }
  }
  return out;
}

/**
 * The run's own files around the reprocessed samples: lock.json as it was, info.json with each row's usage
 * and status read from the new sample info.json (everything else as the archive has it, `run`), and the counts
 * of the run-level SFT files (written as the samples finished, OrderedRunSft).
 */
async function writeRunFiles(output: string, lock: Lock, run: RunInfo, counts: RunSamplesOutcome, reprocessed: readonly ReprocessRow[], shard: Shard | undefined): Promise<void> {
  if (!existsSync(join(output, 'lock.json'))) await createRunLockSink({ path: join(output, 'lock.json') }).consume(itemsOf(lock), createStageContext());
  const present: RunInfo['samples'] = [];
  const training = new TrainingTally();
  // A sample this reprocess could not project stays in the run as an error (its directory absent): never dropped.
  const failed = new Map(reprocessed.filter((r) => r.status === 'error').map((r) => [r.sample, r.error!]));
  for (const row of run.samples) {
    const file = join(output, row.path, 'info.json');
    const failure = failed.get(row.path.split(sep).join('/'));
    if (!existsSync(file) && failure) {
      Object.assign(row, { status: 'error', error: { code: failure.code, message: `not reprocessed: ${failure.message}` }, usage: null });
      delete row.grade;
      present.push(row);
      continue;
    }
    if (!existsSync(file)) continue;
    const s = JSON.parse(await readFile(file, 'utf8')) as SampleInfo;
    row.usage = s.usage;
    training.add(s);
    present.push(row);
  }
  const sft = run.summary.sft_included !== undefined || counts.segmented > 0 ? { included: counts.included, segmented: counts.segmented, total: run.samples.length } : undefined;
  run.samples = run.samples.filter((r) => present.includes(r));
  // The training tally is the archive's (the audits it counts are re-derived the same way per sample); a shard's counts
  // only its own samples.
  run.summary = runSummary(run.samples, { sft, training: shard ? training.summary() : run.summary.training });
  if (shard) run.config = { ...run.config, shard: `${shard.index}/${shard.count}` };
  run.usage = runUsageTotals(run.samples);
  if (run.samples.length !== run.progress.total) {
    // A partial reprocess (a sample directory, or samples that failed): the tree says what it holds.
    run.progress = { total: run.samples.length, processed: run.samples.length, pending: 0 };
  }
  await createRunInfoSink({ path: join(output, 'info.json') }).consume(itemsOf(run), createStageContext());
}
