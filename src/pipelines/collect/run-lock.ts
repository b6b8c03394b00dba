import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { Lock, LOCK_SCHEMA } from '../../schemas/lock.js';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import type { WireTraceMode } from '../../sinks/wire-trace/sink.js';
import { readChecked } from '../run-reader.js';
import { runLockDigest } from '../scale/shard.js';
import { lockedContainer, type DockerPlan } from './docker-plan.js';
import { lockDifferences, redactConfig } from './lock.js';
import { lockedModel, type ResolvedModel } from './models.js';
import { DEFAULT_MAX_RESULTS_BYTES } from './results.js';
import { reusableSample } from './reuse.js';
import type { CollectOptions } from './run.js';
import { sampleDirOf, type SampleRequest } from './sample.js';

/** Present while a run without a lock is being recaptured (seeds/003 §7.4): nothing of it is reused. */
export const MIGRATION_MARKER = '.migration.json';

/** The run's lock.json: what a resume must match before any harness starts. */
export function runLock(o: CollectOptions, requests: readonly { index: number; task: { id: string }; model: { id: string } }[], bundleDigest: string, harnessVersion: string, models: readonly ResolvedModel[], simulators: ReadonlyMap<string, ResolvedModel>, docker: DockerPlan | undefined, wireTrace: WireTraceMode): Lock {
  const lock = wholeRunLock(o, requests, bundleDigest, harnessVersion, models, simulators, docker, wireTrace);
  return o.shard ? { ...lock, part: { kind: 'shard', index: o.shard.index, count: o.shard.count, run_lock_digest: runLockDigest(lock) } } : lock;
}

function wholeRunLock(o: CollectOptions, requests: readonly { index: number; task: { id: string }; model: { id: string } }[], bundleDigest: string, harnessVersion: string, models: readonly ResolvedModel[], simulators: ReadonlyMap<string, ResolvedModel>, docker: DockerPlan | undefined, wireTrace: WireTraceMode): Lock {
  return {
    schema: LOCK_SCHEMA,
    roller_version: o.rollerVersion ?? '0.1.0',
    created_at: new Date().toISOString(),
    requests: requests.map((r) => ({ index: r.index, task_id: r.task.id, model: r.model.id })),
    task_bundle_digest: bundleDigest,
    harness: { name: o.harness, version: harnessVersion },
    // The simulators' models too: a resume under another simulator model configuration is refused.
    models: Object.fromEntries([...models, ...simulators.values()].map((m) => [m.id, redactConfig(lockedModel(m))])),
    image_id: docker?.imageId ?? null,
    ...(docker ? { container: lockedContainer(docker) } : {}),
    timeout_s: o.timeoutS ?? 600,
    options: { thinking: o.thinking ?? null, keep_thinking: o.keepThinking ?? true, wire_trace: wireTrace, cache_trace: o.cacheTrace ?? false, capture_calls: o.captureCalls ?? false, capture_debug: o.captureDebug ?? 'on-error', ...(o.maxResultsBytes !== undefined && o.maxResultsBytes !== DEFAULT_MAX_RESULTS_BYTES ? { max_results_bytes: o.maxResultsBytes } : {}) },
    // A profile changes what the harness can do (OpenClaw's embedded exec runs no sub-agents): part of the lock.
    ...(o.harnessProfile ? { harness_profile: o.harnessProfile } : {}),
  }
}

/**
 * A run directory already there: a resume only under the same lock (the differences named), and the samples it may
 * reuse; a run without a lock (an older roller) is locked and recaptured once, its marker keeping reuse off till then.
 */
export async function resumeCheck(o: CollectOptions, runDir: string, lock: Lock, requests: readonly SampleRequest[], bundleDigest: string, wireTrace: WireTraceMode, previous: RunInfo | undefined): Promise<{ reusable: Map<number, SampleInfo>; lockToWrite: Lock | undefined }> {
  const marker = join(runDir, MIGRATION_MARKER);
  const reusable = new Map<number, SampleInfo>();
  let lockToWrite: Lock | undefined = lock;
  if (existsSync(join(runDir, 'lock.json'))) {
    if (!o.resume) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${runDir} already holds a run: pass --resume to continue it, or choose another --run-name`);
    const old = await readChecked(Lock, join(runDir, 'lock.json'), 'run lock (lock.json)');
    // An older lock has no capture_debug: its samples were kept as info.json's config says (on-error before that).
    old.options.capture_debug ??= (previous?.config.capture_debug as Lock['options']['capture_debug']) ?? 'on-error';
    const diff = lockDifferences(old, lock);
    if (diff.length > 0) {
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `--resume: this run was collected under other conditions; nothing was started. Differences (old -> now):\n  ${diff.join('\n  ')}\nStart a new run (another --run-name) to collect under the new ones.`);
    }
    const mixed: string[] = [];
    // A run being migrated reuses nothing until one full recapture has finished (the marker says so).
    if (!existsSync(marker)) {
      for (const r of requests) {
        const dir = sampleDirOf(runDir, r);
        const found = await reusableSample(dir, r, bundleDigest, o.keepThinking ?? true, wireTrace);
        if (found === 'mixed') mixed.push(dir);
        else if (found && 'defect' in found) o.onNotReused?.(dir, found.defect);
        else if (found) reusable.set(r.index, found);
      }
    }
    if (mixed.length > 0) {
      throw new RollerError(
        ErrorCode.INVALID_OPTIONS,
        `--resume: these samples' main ACTF/SFT holds sub-agent steps (an older roller mixed them in); they are not reused and nothing was started:\n  ${mixed.join('\n  ')}\nCollect again into a new --run-name; to keep their results, re-project a copy of their trace.jsonl offline (roller convert) and validate it first.`,
      );
    }
    lockToWrite = undefined; // it matched: written once, when the run began, and never again
  } else if (!o.resume && existsSync(join(runDir, 'info.json'))) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `${runDir} holds a run without lock.json (an older roller): pass --resume to recapture it in place, or choose another --run-name`);
  } else if (o.resume && existsSync(join(runDir, 'info.json'))) {
    // An older run without a lock: lock it now and rerun every sample once; the marker keeps reuse off
    // until that recapture and the run-level SFT have succeeded, even across a crash.
    await writeJsonAtomic(marker, { reason: 'run collected without lock.json: every sample is recaptured once before any is reused', since: new Date().toISOString() });
  }
  return { reusable, lockToWrite };
}

/** The run's info.json as the last collect left it (a resume carries its creation time and history on). */
export async function previousInfo(runDir: string): Promise<RunInfo | undefined> {
  try {
    return JSON.parse(await readFile(join(runDir, 'info.json'), 'utf8')) as RunInfo;
  } catch {
    return undefined;
  }
}
