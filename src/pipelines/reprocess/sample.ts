import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm } from '../../core/thread-fs.js';
import { dirname, join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { harnessAdapter } from '../../harnesses/index.js';
import type { Lock } from '../../schemas/lock.js';
import type { Manifest } from '../../schemas/manifest.js';
import type { SampleInfo } from '../../schemas/run-info.js';
import { WIRE_LOG_FILE } from '../../sources/proxy/wire-log.js';
import { runPipeline } from '../../core/run-pipeline.js';
import { createCallsJsonlSink } from '../../sinks/calls-jsonl/sink.js';
import { projectCalls } from '../../sources/proxy/project-calls.js';
import { readWireFrames } from '../../sources/proxy/wire-frames.js';
import { callsJsonlBodies } from '../../sources/archive/calls-bodies.js';
import { projectAttempt } from '../collect/project-attempt.js';
import { finishSample } from '../collect/sample-info.js';
import { sampleFilesOf, USER_SIMULATOR_DIR } from '../sample-layout.js';
import type { UserSimulatorInfo } from '../../schemas/dialogue.js';
import { sampleSftLines, type SampleSftLines } from '../finished-sample.js';

import { REPROCESS_TARGETS, type ReprocessTarget } from './targets.js';
import { validateCapture } from '../capture/validate.js';
import type { ReadArena } from '../../core/read-arena.js';



export interface SampleJob {
  /** The archived sample directory (never modified). */
  source: string;
  /** Where its reprocessed copy goes (written to a temp sibling, renamed into place when complete). */
  target: string;
  lock: Lock;
  only: ReprocessTarget[] | null;
  /**
   * Answer with the sample's run-level SFT lines (compact JSONL) in the outcome: encoded here, in parallel,
   * for the run's files.
   */
  sftLines?: boolean;
  /**
   * Decode the calls again from the archived wire log (raw/wire.frames: request bodies by reference into
   * calls.jsonl, raw responses) with the proxy's own decoders, instead of taking calls.jsonl's projection.
   */
  fromWire?: boolean;
  /** Use the archive without checking its published capture first (--no-verify). */
  noVerify?: boolean;
}

export interface SampleOutcome {
  status: 'written' | 'error';
  error?: { code: string; message: string };
  /** With job.sftLines, when written: what the sample adds to the run-level SFT files (null: nothing). */
  sftLines?: SampleSftLines | null;
}

/**
 * One sample of an archive projected again by the same stages as collect (`projectAttempt`): the
 * native files and wire log its final capture kept under raw/, and its calls.jsonl. Everything collect
 * recorded about the execution itself (status, attempts, elapsed time, task outputs, what the harness
 * reported) is carried over; everything derived is derived again. The output appears only complete: it is
 * built in `<target>.partial` and renamed.
 */
export async function reprocessSample(job: SampleJob, resources: { readArena?: ReadArena } = {}): Promise<SampleOutcome> {
  const partial = `${job.target}.partial`;
  try {
    const info = JSON.parse(await readFile(join(job.source, 'info.json'), 'utf8')) as SampleInfo;
    const harness = info.harness.name;
    const { capture, capturePath, nativeRoot } = await checkedArchive(job, info);
    const manifest = JSON.parse(await readFile(join(capture, 'manifest.json'), 'utf8')) as Manifest;
    const wireLog = join(capture, WIRE_LOG_FILE);

    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    const callsPath = job.fromWire ? await callsFromWire(capture, partial) : join(capture, 'calls.jsonl');
    const projection = await projectAttempt(
      partial,
      {
        harness,
        harnessVersion: info.harness.version,
        nativeRoot,
        callsPath,
        wireLog: existsSync(wireLog) ? { path: wireLog, published: true } : null,
        scope: manifest.capture_scope,
        attempt: manifest.attempt,
        createdAt: manifest.created_at,
        ...(resources.readArena ? { readArena: resources.readArena } : {}),
      },
      {
        keepThinking: job.lock.options.keep_thinking,
        captureCalls: true,
        debugRetention: manifest.debug_retention,
        thinking: job.lock.options.thinking,
        profile: job.lock.harness_profile ?? null,
      },
    );
    // An ok sample must project cleanly again; a failed one keeps its own error and what evidence it has.
    if (projection.errors.length > 0 && info.status === 'ok') {
      const e = projection.errors[0]!;
      throw new RollerError(e.code as ErrorCode, `${job.source}: ${e.message}`);
    }
    await keepUnderived(job, partial, capturePath);
    const finished = await finishSample(
      partial,
      { task_id: info.task_id, index: info.index, model: info.model, harness: { name: harness, version: info.harness.version }, attempts: info.attempts, elapsed_ms: info.elapsed_ms, provenance: info.provenance },
      {
        status: info.status,
        error: info.error,
        keepThinking: job.lock.options.keep_thinking,
        participants: projection.participants,
        requests: projection.requests,
        conversion: projection.conversion,
        results: info.results,
        ...(info.grade ? { grade: info.grade } : {}),
        capture: projection.capture,
        audits: projection.audits,
        ...(projection.segments ? { segments: projection.segments } : {}),
        ...(projection.compactionCalls ? { compactionCalls: projection.compactionCalls } : {}),
        ...(projection.auxiliaryCalls ? { auxiliaryCalls: projection.auxiliaryCalls } : {}),
        ...(projection.spawnsWithoutParticipant ? { spawnsWithoutParticipant: projection.spawnsWithoutParticipant } : {}),
        harnessReported: ((info.runtime as { harness_reported?: Record<string, unknown> }).harness_reported ?? null),
        warnings: info.runtime.warnings ?? [],
        ...(existsSync(join(job.source, USER_SIMULATOR_DIR, 'info.json')) ? { userSimulator: JSON.parse(await readFile(join(job.source, USER_SIMULATOR_DIR, 'info.json'), 'utf8')) as UserSimulatorInfo } : {}),
      },
    );
    const lines = job.sftLines ? await sampleSftLines(partial, finished) : undefined;
    if (job.fromWire) await rm(callsPath, { force: true });
    await mkdir(dirname(job.target), { recursive: true });
    await rename(partial, job.target);
    return { status: 'written', ...(lines !== undefined ? { sftLines: lines } : {}) };
  } catch (err) {
    await rm(partial, { recursive: true, force: true }).catch(() => undefined);
    await rm(`${partial}.wire-calls.jsonl`, { force: true }).catch(() => undefined);
    const e = err as Error & { code?: string };
    return { status: 'error', error: { code: typeof e.code === 'string' && e.code.startsWith('ROLLER_') ? e.code : ErrorCode.REPROCESS_FAILED, message: e.message } };
  }
}

/** The archive a sample is projected again from: its final capture, with raw/native/, checked against what was published. */
async function checkedArchive(job: SampleJob, info: SampleInfo): Promise<{ capture: string; capturePath: string; nativeRoot: string }> {
  const harness = info.harness.name;
  if (!harnessAdapter(harness).nativeCapture) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${job.source}: ${harness} has no capture contract, so its archive cannot be projected again`);
  const capturePath = info.runtime.capture?.path;
  if (!capturePath) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${job.source}: no capture: the sample was collected with --no-capture-calls, so there is no archive to project again`);
  const capture = join(job.source, capturePath);
  const nativeRoot = join(capture, 'raw', 'native');
  if (!existsSync(nativeRoot)) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${capture}: no raw/native/ archive (collect keeps raw/ for every sample with --capture-debug full, and for failed ones by default); this sample cannot be projected again`);
  }
  // The archive is what was published: hashes, attribution and references checked before anything is derived from it.
  const problems = job.noVerify ? [] : await validateCapture(capture);
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map((p) => `${capture}/${p}`).join('; ');
    throw new RollerError(ErrorCode.HASH_MISMATCH, `the archived capture does not match what was published: ${shown}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}; restore it from a copy, or pass --no-verify to use it as it is`);
  }
  return { capture, capturePath, nativeRoot };
}

/** --from-wire: the calls decoded again from the archived wire log, into a file beside the sample (never inside it). */
async function callsFromWire(capture: string, partial: string): Promise<string> {
  const wireLog = join(capture, WIRE_LOG_FILE);
  if (!existsSync(wireLog)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${capture}: no ${WIRE_LOG_FILE} to decode the calls from (--from-wire); collect keeps it with --capture-debug full`);
  const callsPath = `${partial}.wire-calls.jsonl`;
  const bodies = callsJsonlBodies(join(capture, 'calls.jsonl'));
  await runPipeline({
    name: 'reprocess-wire',
    source: (ctx) => projectCalls(readWireFrames(wireLog, { bodies, signal: ctx.signal }), { responsePath: WIRE_LOG_FILE }),
    sinks: [createCallsJsonlSink({ path: callsPath, sha256: false })],
  });
  return callsPath;
}

/** Earlier attempts' captures and the files no stage derives, as the archive has them; with --only, the families not selected too. */
async function keepUnderived(job: SampleJob, partial: string, capturePath: string): Promise<void> {
  // Earlier attempts' captures and the files no stage derives: as they are.
  for (const name of await readdir(join(job.source, 'capture'))) {
    if (name !== capturePath.split('/').pop()) await cp(join(job.source, 'capture', name), join(partial, 'capture', name), { recursive: true });
  }
  for (const name of sampleFilesOf('kept')) if (existsSync(join(job.source, name))) await cp(join(job.source, name), join(partial, name), { recursive: true });
  // --only: the families not selected stay as the archive has them.
  if (job.only) {
    for (const t of REPROCESS_TARGETS) {
      if (job.only.includes(t)) continue;
      for (const f of sampleFilesOf(t)) {
        await rm(join(partial, f), { recursive: true, force: true });
        if (existsSync(join(job.source, f))) await cp(join(job.source, f), join(partial, f), { recursive: true });
      }
    }
  }
}
