import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describeHolder, inspectLock } from '../core/process-lock.js';
import { findHarness } from '../harnesses/index.js';
import { profileArgs } from '../harnesses/profiles.js';
import type { Lock } from '../schemas/lock.js';
import type { RunInfo } from '../schemas/run-info.js';
import { leftoverAttempts, RUN_LOCK_FILE } from './collect/run-dir.js';

/**
 * Whether a collect run ended, said as problems of its info.json: one still being collected, one interrupted
 * (Ctrl-C), one killed (its info.json says it runs, its process is gone), one whose finalization failed — each with
 * what is left of it and the command that resumes it. Empty for a finished run (or one that cannot be read: the
 * schema checks say why).
 */
export async function runStateProblems(runDir: string): Promise<string[]> {
  let info: RunInfo;
  let lock: Lock | undefined;
  try {
    info = JSON.parse(await readFile(join(runDir, 'info.json'), 'utf8')) as RunInfo;
    lock = JSON.parse(await readFile(join(runDir, 'lock.json'), 'utf8')) as Lock;
  } catch {
    return [];
  }
  if (info.state === 'finished') return [];
  const holder = await inspectLock(join(runDir, RUN_LOCK_FILE)).catch(() => undefined);
  const counted = `${info.progress.processed} of ${info.progress.total} samples processed`;
  if (holder?.alive === 'yes') return [`info.json: the run is still being collected by ${describeHolder(holder.holder)} (${counted}); validate it once that has ended`];
  const resume = `resume it with: ${resumeCommand(runDir, info, lock)}`;
  const problems: string[] = [];
  if (info.state === 'interrupted') problems.push(`info.json: the run is unfinished: it was interrupted (Ctrl-C or SIGTERM) with ${counted}; ${resume}`);
  else if (info.state === 'finalization_error') problems.push(`info.json: the run's last step failed (writing sft.jsonl) with ${counted}; ${resume}`);
  else {
    const who = holder ? `its collect process (${describeHolder(holder.holder)}) is gone` : 'no collect process holds it';
    problems.push(`info.json: the run was killed: info.json says '${info.state}', but ${who}; ${counted} (info.json holds its last checkpoint); ${resume}`);
  }
  for (const a of await leftoverAttempts(runDir)) {
    problems.push(`sample ${a.index} was under way when the run stopped${a.runtime ? `; its temporary directory ${a.runtime} is left` : ''} (--resume runs it again and removes what it left)`);
  }
  return problems;
}

/** The `roller collect ... --resume` that continues the run: the options its lock must match, as they were given. */
export function resumeCommand(runDir: string, info: RunInfo, lock: Lock | undefined): string {
  const c = info.config as Record<string, unknown>;
  const args = ['roller collect', '--tasks', String(c.tasks), '--harness', String(c.harness)];
  for (const m of (c.models as string[] | undefined) ?? []) args.push('--model', m);
  if (typeof c.model_config === 'string') args.push('--model-config', c.model_config);
  const adapter = findHarness(String(c.harness));
  if (adapter) args.push(...profileArgs(adapter, lock?.harness_profile));
  args.push('--output', dirname(runDir), '--run-name', basename(runDir));
  const o = lock?.options;
  if (o) {
    if (o.wire_trace !== 'actf') args.push('--wire-trace', o.wire_trace);
    if (!o.keep_thinking) args.push('--no-keep-thinking');
    if (o.thinking) args.push('--thinking', o.thinking);
    if (o.capture_calls) args.push('--capture-calls');
    if (adapter?.runner?.cacheTraceFile && o.cache_trace === false) args.push('--no-cache-trace'); // on by default where the harness has one
    if (o.capture_debug && o.capture_debug !== 'on-error') args.push('--capture-debug', o.capture_debug);
  }
  if (lock && lock.timeout_s !== 600) args.push('--timeout', String(lock.timeout_s));
  return [...args, '--resume'].map((a) => (/^[\w./:=@-]+$/.test(a) || a === 'roller collect' ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
