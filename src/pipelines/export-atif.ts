import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createStageContext } from '../core/context.js';
import { itemsOf } from '../core/document-sink.js';
import { createAtifSink } from '../sinks/atif/sink.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import { formatJsonPath } from '../core/json-locate.js';
import type { AtifSubagent } from '../harnesses/adapter.js';
import { harnessAdapter } from '../harnesses/index.js';
import type { Actf } from '../schemas/actf.js';
import { AtifTrajectory } from '../schemas/atif.js';
import type { SampleInfo } from '../schemas/run-info.js';
import { checkValue } from '../schemas/validate.js';
import { withoutReasoning } from '../transforms/actf/without-reasoning.js';
import { actfToAtif } from '../transforms/atif/from-actf.js';
import { sampleCallTokens } from './call-tokens.js';
import { openRun, type RunSample } from './run-reader.js';

export interface ExportResult {
  exported: { path: string; status: string }[];
  skipped: { path: string; reason: string }[];
  /** Samples that could not be exported (a damaged or missing ACTF or trace): nothing of them is written. */
  failed: { path: string; error: string }[];
}

/**
 * `roller export RUN_DIR [--output DIR]` (seeds/003 §4.5): every sample with a trace_ACTF.json — failed and
 * timed-out ones included, their status recorded — as <output>/<model>/<index>_<task>/trajectory.json
 * (+ images/); samples whose conversion gave no ACTF are reported skipped. A sample that cannot be exported (its
 * files damaged or gone) is a failed row and the others go on; each is built beside its place and renamed into it,
 * so no partial output remains. Every document is checked against the ATIF validator rules before it is written;
 * the run itself is never modified.
 */
export async function exportAtif(runDir: string, output = join(runDir, 'atif')): Promise<ExportResult> {
  const opened = await openRun(runDir);
  const run = opened.info;
  const result: ExportResult = { exported: [], skipped: [], failed: [] };
  // A run collected with --no-keep-thinking: sub-agents re-read from trace.jsonl lose their reasoning as the main ACTF did.
  const keepThinking = (run.config as { keep_thinking?: unknown } | undefined)?.keep_thinking !== false;
  for await (const row of opened.rows()) {
    try {
      const done = await exportSample(runDir, await opened.sample(row), output, keepThinking);
      if (typeof done === 'string') result.skipped.push({ path: row.path, reason: done });
      else result.exported.push(done);
    } catch (err) {
      result.failed.push({ path: row.path, error: (err as Error).message });
    }
  }
  return result;
}

/** One sample exported (its row), or why it is skipped; throws what makes it fail. */
async function exportSample(runDir: string, sample: RunSample, output: string, keepThinking: boolean): Promise<{ path: string; status: string } | string> {
  const { dir, info, row } = sample;
  if (!info.trajectory.actf) return 'its conversion produced no ACTF (runtime.trajectory_conversion says why)';
  const actfPath = join(dir, info.trajectory.actf);
  if (!existsSync(actfPath)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${actfPath} is missing, though the sample's info.json names it`);
  const actf = await readJson<Actf>(actfPath);
  // samples/<model>/<index>_<task> -> <output>/<model>/<index>_<task>
  const rel = join(basename(dirname(dir)), basename(dir));
  const sessionId = `${basename(runDir)}/${rel}`;
  const tokens = await sampleCallTokens(dir, info);
  const { trajectory, images } = actfToAtif(actf, info, sessionId, (id) => tokens.get(id));
  if (row.status === 'skipped') trajectory.extra.roller.reused_by_resume = true;
  const raw = info.trajectory.raw ? join(dir, info.trajectory.raw) : undefined;
  const adapter = harnessAdapter(info.harness.name);
  if (raw && adapter.atifSubagents) {
    const children = adapter.atifSubagents(await readJsonl(raw), sample.participants).map((c) => (keepThinking ? c : { ...c, actf: withoutReasoning(c.actf) }));
    images.push(...embedSubagents(trajectory, children, info, sessionId));
  }
  const issues = checkValue(AtifTrajectory, trajectory);
  if (issues.length > 0) {
    throw new RollerError(ErrorCode.CONVERSION_INVALID, `${row.path}: the ATIF produced is not valid (${issues.map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ')}); this is a roller bug, please report it with the sample`);
  }
  await createAtifSink({ output }).consume(itemsOf({ rel, trajectory, images }), createStageContext());
  return { path: join(rel, 'trajectory.json'), status: row.status };
}

async function readJson<T>(path: string): Promise<T> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new RollerError(ErrorCode.JSON_INVALID, `${path} is not valid JSON (${(err as Error).message}); the file is damaged (cut short or edited): restore it, or collect or reprocess that run again`);
  }
}

async function readJsonl(path: string): Promise<Json[]> {
  const out: Json[] = [];
  for (const [i, line] of (await readFile(path, 'utf8')).split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Json);
    } catch (err) {
      throw new RollerError(ErrorCode.JSON_INVALID, `${path}:${i + 1} is not valid JSON (${(err as Error).message}); the file is damaged`);
    }
  }
  return out;
}

type Json = Record<string, any>;

/**
 * Embeds each sub-agent's trajectory (ATIF v1.7 subagent_trajectories) in its parent's: the root's children under
 * the root, a nested sub-agent under its parent's embedded trajectory — each embedded trajectory is valid on its own,
 * so a ref resolves among the trajectories embedded beside it. The spawning call's result points at it
 * (subagent_trajectory_ref); that call is the participant's spawn_tool_call_id (native evidence). A sub-agent whose
 * parent is not among them is embedded under the root.
 */
function embedSubagents(trajectory: Json, children: readonly AtifSubagent[], info: SampleInfo, sessionId: string) {
  const people = ((info.runtime as { participants?: unknown }).participants ?? []) as { native_id: string; parent?: string | null; spawn_tool_call_id: string | null }[];
  const images = [];
  const byParticipant = new Map<string, Json>();
  for (const c of children) {
    const child = actfToAtif(c.actf, info, sessionId);
    images.push(...child.images);
    const { session_id: _s, extra: _e, ...rest } = child.trajectory;
    byParticipant.set(c.participant, { ...rest, trajectory_id: c.id, extra: { roller: { participant: c.participant } } });
  }
  for (const c of children) {
    const person = people.find((p) => p.native_id === c.id);
    const container = (person?.parent ? byParticipant.get(person.parent) : undefined) ?? trajectory;
    (container.subagent_trajectories ??= []).push(byParticipant.get(c.participant)!);
    const spawn = person?.spawn_tool_call_id;
    if (!spawn) continue;
    for (const step of container.steps as Json[]) {
      for (const r of (step.observation?.results ?? []) as Json[]) if (r.source_call_id === spawn) r.subagent_trajectory_ref = [{ trajectory_id: c.id }];
    }
  }
  return images;
}
