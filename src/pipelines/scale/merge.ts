import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { itemsOf } from '../../core/document-sink.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { refuseLinksBelow } from '../../core/inside-root.js';
import { ensurePrivateDir } from '../../core/private-dir.js';
import { describeHolder, inspectLock } from '../../core/process-lock.js';
import { Lock } from '../../schemas/lock.js';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import { createRunInfoSink } from '../../sinks/run-info/sink.js';
import { createRunLockSink } from '../../sinks/run-lock/sink.js';
import { RunInfoBook } from '../collect/run-info-book.js';
import { RUN_LOCK_FILE } from '../collect/run-dir.js';
import { sampleDirOf } from '../collect/sample.js';
import { finishedSample, type FinishedSample } from '../finished-sample.js';
import { readChecked } from '../run-reader.js';
import { lockDifferences } from '../collect/lock.js';
import { runSampleSinks } from '../run-samples.js';
import { openUserSinks, refuseCallSinksWithoutCalls, sinkDeadlines, type SinkSpec } from '../user-sinks.js';
import type { SinkFailure, UserSinks } from '../../sinks/user-sink.js';
import { linkTree, moveTree, refuseLinksInTree, type Placed } from './link-tree.js';
import { runLockDigest } from './shard.js';
import { addTo } from '../../core/multimap.js';
import { processAlive } from '../../core/dead-leftovers.js';

export interface MergeOptions {
  /** The parts' run directories: every shard of a run (--shard I/N), or queue workers' own outputs. */
  parts: string[];
  /** The merged run's directory (must not exist, or be empty). */
  output: string;
  /** move: rename each sample into the run (the parts are emptied); link (default): hard links, the parts untouched. */
  mode?: 'link' | 'move';
  /** Sinks of a user's own (as collect's): they get the merged run's finished samples (and their calls), in request order. */
  sinkSpecs?: SinkSpec[];
  sinks?: UserSinks[];
  /** Seconds a user sink may take over one item, and to finish (default 120). */
  sinkTimeoutS?: number;
  /** Progress: one call per sample placed. */
  onSample?: (done: number, total: number) => void;
  /**
   * How a shard is run again where the parts were made, `{shard}` standing for its index (roller slurm's merge job:
   * `sbatch --array={shard} …/shards.sbatch`): named when a part did not finish.
   */
  resubmit?: string;
}

export interface MergeResult {
  runDir: string;
  info: RunInfo;
  /** Files hard-linked, copied where a link was not possible (another filesystem), and samples moved (--move). */
  placed: Placed;
  /** User sinks that failed (the run's own files are complete regardless). */
  sinkFailures: SinkFailure[];
}

interface Holder {
  part: Part;
  dir: string;
}

interface Part {
  dir: string;
  lock: Lock;
  info: RunInfo | undefined;
  label: string;
}

const MAX_NAMED = 20;

/** One directory name of the run's own making: not empty, no separator, not . or .., no control character. */
function isPlainSegment(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

/**
 * What a merged run may hold that a one-process run of the same requests does not, by file: when (times) and from what
 * (merged_from: the parts, where they were, when they ran). Every other byte of lock.json, info.json, sft.jsonl,
 * sft_segments.jsonl, sft_subagents.jsonl and of each sample is the same (tests/integration/merge.test.ts holds the merge to it).
 */
export const MERGE_VOLATILE: Readonly<Record<string, readonly string[]>> = {
  'lock.json': ['created_at'],
  'info.json': ['created_at', 'updated_at', 'merged_from'],
};

/**
 * `roller merge`: a run's parts into the run. Every part must carry the same lock (the differing fields named), and
 * together they must hold every request index exactly once (missing and duplicate ones named, with the shard that
 * owes them); nothing is written before both hold. Then the samples are linked (or moved) into place, and the run's
 * own files built as collect builds them: lock.json (the whole run's: no part), info.json from the samples' own
 * info.json, sft.jsonl, sft_segments.jsonl and sft_subagents.jsonl in request order. The run appears only complete (built beside the
 * output, renamed into place).
 */
export async function merge(o: MergeOptions): Promise<MergeResult> {
  if (o.parts.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'roller merge: name the parts to merge (shard run directories)');
  const parts = await readParts(o.parts, o.resubmit);
  const lock = sameLock(parts);
  refuseUnfinished(parts, o.resubmit);
  const output = resolve(o.output);
  // A merge killed mid-way (kill -9) left its samples in <output>.merging-PID: this one takes them from there.
  const leftovers = await killedBuilds(output, lock);
  const holders = await placeRequests(parts, lock, leftovers);
  if (existsSync(output) && (await readdir(output)).length > 0) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--output ${o.output} is there and not empty: roller merge writes a new run (choose another directory, or remove it)`);
  }
  await ensurePrivateDir(dirname(output), 'the merged run\'s parent directory');
  const building = `${output}.merging-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await ensurePrivateDir(building, 'the merged run (being built)');
  const moved: Moved[] = [];
  try {
    const result = await build(o, parts, lock, holders, building, output, moved);
    await rm(output, { recursive: true, force: true }); // an empty directory the user made for it
    await rename(building, output);
    for (const l of leftovers) await rm(l.dir, { recursive: true, force: true }); // its samples are in the run now
    return { ...result, runDir: output };
  } catch (err) {
    // --move: every sample already moved goes back to its part before anything is removed; one that cannot stays in
    // the building directory, which is then kept and named — a failed merge never loses a sample.
    const stuck = await moveBack(moved);
    if (stuck.length === 0) await rm(building, { recursive: true, force: true });
    else throw new RollerError(ErrorCode.MERGE_REFUSED, `the merge failed (${(err as Error).message}) and ${stuck.length} moved sample(s) could not go back to their parts: they are in ${building} (${stuck.slice(0, 3).join(', ')}${stuck.length > 3 ? ', …' : ''}); move them back by hand (mv) before anything else`, { cause: err });
    throw err;
  }
}

/**
 * The building directories of merges of this output whose process is gone (`<output>.merging-PID`), as parts to take
 * samples from; one of a merge still running is refused (two merges into one output).
 */
async function killedBuilds(output: string, lock: Lock): Promise<Part[]> {
  const prefix = `${basename(output)}.merging-`;
  const names = await readdir(dirname(output)).catch(() => [] as string[]);
  const found: Part[] = [];
  for (const name of names.filter((n) => n.startsWith(prefix))) {
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (processAlive(pid)) throw new RollerError(ErrorCode.MERGE_REFUSED, `another merge (process ${pid}) is building ${output} in ${join(dirname(output), name)}: let it finish, or stop it and merge again`);
    found.push({ dir: join(dirname(output), name), lock, info: undefined, label: `the killed merge's ${name}` });
  }
  return found;
}


interface Moved {
  from: string;
  to: string;
}

/** The moved samples renamed back where they came from, last first; those that could not be (their paths in the build). */
async function moveBack(moved: readonly Moved[]): Promise<string[]> {
  const stuck: string[] = [];
  for (const m of [...moved].reverse()) {
    try {
      await mkdir(dirname(m.from), { recursive: true, mode: 0o700 });
      await rename(m.to, m.from);
    } catch {
      stuck.push(m.to);
    }
  }
  return stuck;
}

async function readParts(dirs: readonly string[], resubmit?: string): Promise<Part[]> {
  const parts: Part[] = [];
  const seen = new Set<string>();
  for (const given of dirs) {
    const dir = resolve(given);
    if (seen.has(dir)) throw new RollerError(ErrorCode.MERGE_REFUSED, `${given} is named twice`);
    seen.add(dir);
    // A shard the engine never started (cancelled while pending) has no directory yet.
    const shard = /\.shard-(\d+)-of-(\d+)$/.exec(dir);
    if (shard && resubmit && !existsSync(dir)) throw new RollerError(ErrorCode.MERGE_REFUSED, `${given}: shard ${shard[1]}/${shard[2]} never started (no directory); nothing was written. Run it: ${resubmit.replaceAll('{shard}', shard[1]!)}`);
    if (!existsSync(join(dir, 'lock.json'))) throw new RollerError(ErrorCode.MERGE_REFUSED, `${given}: no lock.json — not a run directory roller collect --shard wrote`);
    const lock = await readChecked(Lock, join(dir, 'lock.json'), 'run lock (lock.json)');
    if (!lock.part) throw new RollerError(ErrorCode.MERGE_REFUSED, `${given}: a whole run (its lock.json names no shard or worker): nothing to merge it with`);
    const held = await inspectLock(join(dir, RUN_LOCK_FILE));
    if (held?.alive === 'yes') throw new RollerError(ErrorCode.MERGE_REFUSED, `${given} is being collected by ${describeHolder(held.holder)}: merge it once that has ended`);
    const info = existsSync(join(dir, 'info.json')) ? (JSON.parse(await readFile(join(dir, 'info.json'), 'utf8')) as RunInfo) : undefined;
    const label = lock.part.kind === 'shard' ? `shard ${lock.part.index}/${lock.part.count}` : `worker ${lock.part.worker}`;
    parts.push({ dir, lock, info, label });
  }
  return parts;
}

/** The whole run's lock, once every part is known to carry it (else the fields that differ, named). */
function sameLock(parts: readonly Part[]): Lock {
  const first = parts[0]!;
  const digest = first.lock.part!.run_lock_digest;
  for (const p of parts) {
    const { part: _part, ...whole } = p.lock;
    // A lock edited by hand (or by another roller) no longer matches the digest it carries.
    if (runLockDigest(whole) !== p.lock.part!.run_lock_digest) throw new RollerError(ErrorCode.MERGE_REFUSED, `${p.dir}/lock.json: its run_lock_digest is not the digest of the lock it is in (edited?): collect the shard again`);
    if (p.lock.part!.run_lock_digest === digest) continue;
    const diff = lockFieldDifferences(first.lock, p.lock);
    throw new RollerError(ErrorCode.MERGE_REFUSED, `${p.dir} (${p.label}) is a part of another run than ${first.dir} (${first.label}); nothing was written. Differences:\n  ${diff.join('\n  ')}`);
  }
  const kinds = new Set(parts.map((p) => p.lock.part!.kind));
  if (kinds.size > 1) throw new RollerError(ErrorCode.MERGE_REFUSED, 'the parts mix shards and queue workers\' outputs of one run: merge the shards, or the workers\' outputs, not both');
  const shards = parts.filter((p) => p.lock.part!.kind === 'shard').map((p) => p.lock.part as { index: number; count: number });
  if (shards.length > 0) {
    const counts = new Set(shards.map((s) => s.count));
    if (counts.size > 1) throw new RollerError(ErrorCode.MERGE_REFUSED, `the shards split the run in different ways (${[...counts].map((n) => `of ${n}`).join(', ')}): merge shards of one split`);
    const count = shards[0]!.count;
    const byIndex = new Map<number, string[]>();
    for (const p of parts) addTo(byIndex, (p.lock.part as { index: number }).index, p.dir);
    const twice = [...byIndex].filter(([, dirs]) => dirs.length > 1);
    if (twice.length > 0) throw new RollerError(ErrorCode.MERGE_REFUSED, `a shard is named twice: ${twice.map(([i, dirs]) => `${i}/${count} in ${dirs.join(' and ')}`).join('; ')}`);
    const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byIndex.has(i));
    if (missing.length > 0) throw new RollerError(ErrorCode.MERGE_REFUSED, `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} of the run ${missing.length > 1 ? 'are' : 'is'} not among the parts: name ${missing.length > 1 ? 'their directories' : 'its directory'} (<run-name>.shard-I-of-${count}) or collect ${missing.length > 1 ? 'them' : 'it'} with --shard I/${count}`);
  }
  const { part: _part, ...whole } = first.lock;
  // The run began when its first part did.
  const created = parts.map((p) => p.lock.created_at).sort()[0]!;
  return { ...whole, created_at: created };
}

/**
 * A part whose collect did not end (interrupted: scancel, Ctrl-C, a pod evicted; or killed and never resumed) may hold
 * a sample that ended only because it was stopped: refused, with how to finish each such part.
 */
function refuseUnfinished(parts: readonly Part[], resubmit: string | undefined): void {
  const unfinished = parts.filter((p) => p.info && p.info.state !== 'finished');
  if (unfinished.length === 0) return;
  const again = (p: Part): string => {
    const part = p.lock.part!;
    if (part.kind !== 'shard') return `roller collect --resume with that worker's arguments, or roller collect --resume --queue`;
    if (resubmit) return resubmit.replaceAll('{shard}', String(part.index));
    return `roller collect --resume with the run's arguments and --shard ${part.index}/${part.count}`;
  };
  const lines = unfinished.map((p) => `${p.label} (${p.dir}): ${p.info!.state === 'interrupted' ? 'interrupted' : `its collect stopped while ${p.info!.state}`}; run it again: ${again(p)}`);
  throw new RollerError(
    ErrorCode.MERGE_REFUSED,
    `${unfinished.length} part${unfinished.length > 1 ? 's' : ''} did not finish, so a sample may have ended only because it was stopped; nothing was written:\n  ${lines.join('\n  ')}\nThe rerun resumes the part (its finished samples are kept); then merge again.`,
  );
}

/** Where two parts' locks differ (the part itself aside), roller_version included: collect's own lockDifferences. */
function lockFieldDifferences(a: Lock, b: Lock): string[] {
  const { part: _a, ...x } = a;
  const { part: _b, ...y } = b;
  const version = x.roller_version !== y.roller_version ? [`$.roller_version: ${x.roller_version} -> ${y.roller_version}`] : [];
  return [...version, ...lockDifferences(x, y, MAX_NAMED)];
}

/**
 * For each request of the run, the part holding its finished sample (its info.json written, for that request): exactly
 * one. A sample a killed part left half-written has no info.json and counts as missing.
 */
async function placeRequests(parts: readonly Part[], lock: Lock, leftovers: readonly Part[] = []): Promise<Map<number, Holder>> {
  // Where each sample is, not its info (read again when it is placed): memory stays flat however many samples.
  const holders = new Map<number, Holder>();
  const twice: string[] = [];
  const missing: number[] = [];
  for (const r of lock.requests) {
    // A part may come from anyone: its task ids name directories, so each must be one plain path segment.
    if (!isPlainSegment(r.task_id)) {
      throw new RollerError(ErrorCode.MERGE_REFUSED, `${parts[0]!.dir}/lock.json: request ${r.index}'s task id ${JSON.stringify(r.task_id)} is not one plain path segment (no /, \\, '..' or control characters); roller collect never writes one — this part was not made by it. Nothing was written`);
    }
    const request = { index: r.index, task: { id: r.task_id }, model: { id: r.model } };
    for (const part of parts) {
      const dir = sampleDirOf(part.dir, request);
      await refuseLinksBelow(part.dir, dir, `${part.label}'s sample ${r.index}`).catch((err: Error) => {
        throw new RollerError(ErrorCode.MERGE_REFUSED, `${err.message}; a part's sample directories are plain directories: nothing was written`);
      });
      const info = await finishedInfo(dir, r);
      if (!info) continue;
      await refuseLinksInTree(dir);
      const already = holders.get(r.index);
      if (already) twice.push(`${r.index} (${r.task_id}, ${r.model}): ${already.dir} and ${dir}`);
      else holders.set(r.index, { part, dir });
    }
    // Not in any part: a killed merge may have moved it into its building directory.
    for (const left of holders.has(r.index) ? [] : leftovers) {
      const dir = sampleDirOf(left.dir, request);
      if (!(await finishedInfo(dir, r))) continue;
      await refuseLinksInTree(dir);
      holders.set(r.index, { part: left, dir });
      break;
    }
    if (!holders.has(r.index)) missing.push(r.index);
  }
  if (twice.length > 0) throw new RollerError(ErrorCode.MERGE_REFUSED, `${twice.length} request${twice.length > 1 ? 's are' : ' is'} in two parts; nothing was written (remove one copy of each):\n  ${twice.slice(0, MAX_NAMED).join('\n  ')}`);
  if (missing.length > 0) {
    const owed = (i: number) => {
      const shard = parts[0]!.lock.part?.kind === 'shard' ? (parts[0]!.lock.part as { count: number }).count : 0;
      return shard ? ` (shard ${i % shard}/${shard})` : '';
    };
    const req = (i: number) => lock.requests[i]!;
    throw new RollerError(
      ErrorCode.MERGE_REFUSED,
      `${missing.length} of ${lock.requests.length} requests have no finished sample in any part; nothing was written:\n  ${missing.slice(0, MAX_NAMED).map((i) => `${i} ${req(i).task_id} ${req(i).model}${owed(i)}`).join('\n  ')}${missing.length > MAX_NAMED ? `\n  … and ${missing.length - MAX_NAMED} more` : ''}\nFinish them (roller collect --resume with the same --shard), then merge again.`,
    );
  }
  return holders;
}

async function finishedInfo(dir: string, r: Lock['requests'][number]): Promise<SampleInfo | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, 'info.json'), 'utf8');
  } catch {
    return undefined;
  }
  let info: SampleInfo;
  try {
    info = JSON.parse(text) as SampleInfo;
  } catch {
    throw new RollerError(ErrorCode.MERGE_REFUSED, `${dir}/info.json is not JSON (cut while written?): collect that sample again (roller collect --resume with its --shard)`);
  }
  if (info.index !== r.index || info.task_id !== r.task_id || info.model !== r.model) {
    throw new RollerError(ErrorCode.MERGE_REFUSED, `${dir}/info.json is sample ${info.index} (${info.task_id}, ${info.model}), not request ${r.index} (${r.task_id}, ${r.model}) as its place says`);
  }
  return info;
}

/** The merged run, built in `building`: samples in place, then lock.json, info.json and the run-level SFT files. */
async function build(o: MergeOptions, parts: readonly Part[], lock: Lock, holders: Map<number, Holder>, building: string, output: string, moved: Moved[]): Promise<Omit<MergeResult, 'runDir'>> {
  const firstInfo = parts.find((p) => p.info)?.info;
  const { shard: _shard, ...config } = (firstInfo?.config ?? {}) as Record<string, unknown>;
  const book = new RunInfoBook({
    rollerVersion: lock.roller_version,
    // The run's own name (a shard's less its .shard-I-of-N), wherever the merged run is put.
    runName: firstInfo ? firstInfo.run_name.replace(/\.shard-\d+-of-\d+$/, '') : basename(output),
    runDir: building,
    createdAt: parts.map((p) => p.info?.created_at ?? p.lock.created_at).sort()[0]!,
    config,
    delegationOff: firstInfo?.delegation?.reason ?? null,
    requests: { total: lock.requests.length, tasks: firstInfo?.requests.tasks ?? new Set(lock.requests.map((r) => r.task_id)).size, models: firstInfo?.requests.models ?? new Set(lock.requests.map((r) => r.model)).size },
    resumeHistory: [],
    mergedFrom: parts.map((p) => ({ part: p.label, dir: p.dir, state: p.info?.state ?? 'interrupted', created_at: p.info?.created_at ?? p.lock.created_at, updated_at: p.info?.updated_at ?? p.lock.created_at, resumes: p.info?.resume_history?.length ?? 0 })),
  });
  for (const p of parts) book.errors.push(...(p.info?.errors ?? []));
  const placed: Placed = { linked: 0, copied: 0, moved: 0 };
  // Pulled by the run-level sinks, one sample at a time: a sample is placed only when the one before has been written,
  // so nothing piles up however many samples there are.
  async function* inRequestOrder(): AsyncGenerator<FinishedSample> {
    for (const r of lock.requests) {
      const held = holders.get(r.index)!;
      const target = join(building, relative(held.part.dir, held.dir));
      if (relative(building, target).startsWith('..')) throw new RollerError(ErrorCode.MERGE_REFUSED, `sample ${r.index} would be placed at ${target}, outside the merged run; nothing is written outside --output`);
      const n = o.mode === 'move' ? await moveTree(held.dir, target) : await linkTree(held.dir, target);
      if (o.mode === 'move') moved.push({ from: held.dir, to: target });
      placed.linked += n.linked;
      placed.copied += n.copied;
      placed.moved += n.moved;
      const info = (await finishedInfo(target, r))!;
      book.add(info);
      o.onSample?.(r.index + 1, lock.requests.length);
      yield finishedSample(target, info);
    }
  }
  const user = await openUserSinks(o.sinkSpecs ?? [], o.sinks ?? [], process.cwd(), sinkDeadlines(o.sinkTimeoutS));
  if (!lock.options.capture_calls) await refuseCallSinksWithoutCalls(user, 'the run was collected without --capture-calls');
  const samples = runSampleSinks(building, inRequestOrder(), user);
  const written = await samples;
  book.sftCounts = { included: written.included, segmented: written.segmented, total: lock.requests.length };
  book.state = 'finished';
  await createRunLockSink({ path: join(building, 'lock.json') }).consume(itemsOf(lock), createStageContext());
  const info = book.snapshot();
  await createRunInfoSink({ path: join(building, 'info.json') }).consume(itemsOf(info), createStageContext());
  return { info, placed, sinkFailures: written.sinkFailures };
}
