import { open, readFile, lstat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { harnessAdapter } from '../../harnesses/index.js';
import { Actf } from '../../schemas/actf.js';
import type { SampleInfo } from '../../schemas/run-info.js';
import { SftSegment } from '../../schemas/sft.js';
import { checkValue } from '../../schemas/validate.js';
import type { WireTraceMode } from '../../sinks/wire-trace/sink.js';
import { validateCapture } from '../capture/validate.js';
import { projectSft } from '../../transforms/sft/project.js';
import { dialogueProblems } from './dialogue-checks.js';

/** A finished sample whose published capture fails its checks: run again, and the user told why. */
export interface CaptureDefect {
  defect: string;
}

/**
 * A finished sample a resume may reuse (seeds/003 §7.4): it was ok, it is this request, its bundle digest
 * matches, raw and a valid ACTF are there, the SFT is exactly the projection of that ACTF, its results
 * are still there with their sizes, and its published capture holds (seeds/000: the formal files' hashes, the
 * attribution and every relation reference, as validate-capture checks them), and a dialogue's files hold. Anything
 * less: the sample is run again — a capture or dialogue that fails its checks says why.
 */
export async function reusableSample(dir: string, r: { index: number; task: { id: string; user_simulator?: unknown }; model: { id: string } }, digest: string, keepThinking: boolean, wireTrace: WireTraceMode): Promise<SampleInfo | 'mixed' | CaptureDefect | undefined> {
  try {
    const info = JSON.parse(await readFile(join(dir, 'info.json'), 'utf8')) as SampleInfo;
    if ((info.status !== 'ok' && info.status !== 'skipped') || info.index !== r.index || info.task_id !== r.task.id || info.model !== r.model.id) return undefined;
    if (info.provenance.task_bundle_digest !== digest || !info.trajectory.raw || !info.trajectory.actf) return undefined;
    if (!(await rawHoldsAMessage(join(dir, info.trajectory.raw)))) return undefined;
    if (wireTrace === 'full' && !existsSync(join(dir, 'wire_trace.jsonl'))) return undefined;
    const actf = JSON.parse(await readFile(join(dir, info.trajectory.actf), 'utf8')) as Actf;
    if (checkValue(Actf, actf).length > 0) return undefined;
    if (await harnessAdapter(info.harness.name).mixesSubAgentSteps?.(join(dir, info.trajectory.raw), actf)) return 'mixed';
    if (info.trajectory.sft) {
      const sft = JSON.parse(await readFile(join(dir, info.trajectory.sft), 'utf8')) as unknown;
      const again = projectSft(actf, { keepThinking });
      if (again.status !== 'ok' || stableStringify(again.record) !== stableStringify(sft)) return undefined;
    }
    for (const seg of info.trajectory.sft_segments ?? []) {
      if (checkValue(SftSegment, JSON.parse(await readFile(join(dir, seg.path), 'utf8'))).length > 0) return undefined;
    }
    for (const f of info.results) {
      const st = await lstat(join(dir, 'results', f.path)).catch(() => undefined);
      if (!st?.isFile() || st.size !== f.size) return undefined;
    }
    const capture = info.runtime.capture?.path;
    if (capture) {
      const problems = await validateCapture(join(dir, capture));
      if (problems.length > 0) return { defect: `${join(dir, capture)}: ${problems.length} problem(s), first: ${problems[0]}` };
    }
    // A user-simulator task: its conversation and both participants' files too (seeds/003 §7.4).
    if (r.task.user_simulator) {
      const problems = await dialogueProblems(dir, { keepThinking });
      if (problems.length > 0) return { defect: `${dir}: ${problems.length} problem(s) in its dialogue files, first: ${problems[0]}` };
    }
    return info;
  } catch {
    return undefined;
  }
}

/** The raw trace starts with a JSON record and holds a model message (read from the front only: no full reread). */
async function rawHoldsAMessage(path: string): Promise<boolean> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const buf = Buffer.alloc(1 << 20);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const head = buf.toString('utf8', 0, bytesRead);
    const first = head.slice(0, head.indexOf('\n') === -1 ? head.length : head.indexOf('\n'));
    JSON.parse(first);
    return /"type":"(assistant|response_item)"/.test(head) || /"role":"assistant"/.test(head);
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
