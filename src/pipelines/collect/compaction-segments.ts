import { mkdir, readFile, rm } from '../../core/thread-fs.js';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { fileIncludes } from '../../core/file-includes.js';
import { claudeCodeCompactions, compactionSummaryCalls, jsonlRecords, type ClaudeCodeCompaction } from '../../harnesses/claude-code/compaction.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { TrajectoryConversion } from '../../schemas/run-info.js';
import { projectSegments, type SegmentMeta } from '../../transforms/sft/segments.js';
import type { z } from 'zod';

type Conversion = z.infer<typeof TrajectoryConversion>;

/** The main context's compactions and the calls that wrote their summaries. */
export interface MainCompactions {
  root: ParticipantUsage;
  compactions: ClaudeCodeCompaction[];
  summaryCalls: Map<string, ClaudeCodeCompaction>;
}

/** Claude Code: the compactions its main session records (trace.jsonl), or null when there are none. */
export async function findMainCompactions(harness: string, tracePath: string, calls: readonly Call[], participants: readonly ParticipantUsage[]): Promise<MainCompactions | null> {
  if (harness !== 'claude-code') return null;
  const root = participants.find((p) => p.role === 'root');
  if (!root) return null;
  // The common case (no compaction), told without reading the trace whole.
  if (!(await fileIncludes(tracePath, '"compact_boundary"'))) return null;
  const compactions = claudeCodeCompactions(jsonlRecords(await readFile(tracePath, 'utf8')));
  if (compactions.length === 0) return null;
  return { root, compactions, summaryCalls: compactionSummaryCalls(calls, compactions, root.native_id) };
}

/** The capture evidence for each summary call (NativeCapture.recordedOutputs). */
export function summaryCallEvidence(found: MainCompactions): Record<string, { participant: string; evidence: string }> {
  return Object.fromEntries(
    [...found.summaryCalls].map(([callId, c]) => [
      callId,
      { participant: found.root.participant, evidence: `compaction summary call: its session header names the main session and its summary is recorded verbatim in compact summary record ${c.summaryUuid} (boundary ${c.boundaryUuid})` },
    ]),
  );
}

/**
 * A compacted main context (seeds/003 §4.3): sft_segments/NNNN.json replace the linear trace_SFT.json (which
 * would join windows the model never saw at once). Updates `conversion` in place with the outcome of both
 * targets and returns the segment metadata for info.json, or null when segments are unavailable — then
 * SFT is unavailable with the reason, raw and ACTF stay.
 */
export async function writeCompactionSegments(dir: string, actf: Actf | null, calls: readonly Call[], found: MainCompactions, keepThinking: boolean, conversion: Conversion[]): Promise<SegmentMeta[] | null> {
  await rm(join(dir, 'trace_SFT.json'), { force: true });
  const set = (target: Conversion['target'], status: Conversion['status'], reason: string | null) => {
    const at = conversion.findIndex((c) => c.target === target);
    const entry = { target, status, reason };
    if (at === -1) conversion.push(entry);
    else conversion[at] = entry;
  };
  const missing = found.compactions.filter((c) => ![...found.summaryCalls.values()].includes(c));
  const projection = !actf
    ? { status: 'unavailable' as const, reason: 'no ACTF' }
    : missing.length > 0
      ? { status: 'unavailable' as const, reason: `no captured call wrote the summary of compaction ${missing.map((c) => c.boundaryUuid).join(', ')}` }
      : projectSegments(
          actf,
          calls.filter((c) => c.participant_id === found.root.participant || found.summaryCalls.has(c.call_id)),
          [...found.summaryCalls].map(([summaryCallId, c]) => ({ summaryCallId, source: `claude-code compact_boundary ${c.boundaryUuid}` })),
          { keepThinking },
        );
  const linear = `the main context was compacted ${found.compactions.length} time(s): linear SFT would join windows the model never saw at once`;
  if (projection.status !== 'ok') {
    set('sft', 'unavailable', `${linear}; compaction segments unavailable: ${projection.reason}`);
    set('sft_segments', 'unavailable', projection.reason);
    return null;
  }
  await mkdir(join(dir, 'sft_segments'), { recursive: true });
  for (const s of projection.segments) await writeJsonAtomic(join(dir, s.meta.path), s.record);
  set('sft', 'unavailable', `${linear}; see sft_segments/`);
  set('sft_segments', 'ok', null);
  return projection.segments.map((s) => s.meta);
}

/** A call the native transcript does not hold as a message: a compaction summary, with its wire usage. */
export interface CompactionCallUsage {
  call_id: string;
  participant: string;
  /** The native record that holds its summary. */
  summary_record: string | null;
  tokens: { input: number; cache_creation: number; cache_read: number; output: number; reasoning: number };
}

/**
 * The summary calls' own tokens, from the usage each response reported on the wire: the transcript has no
 * message for them, yet the harness counts them in its run totals (Claude Code's modelUsage), not in the
 * main agent's (its result usage) — so `roller usage` reports them beside the participant, not inside it.
 */
export function compactionCallUsage(found: MainCompactions, calls: readonly Call[]): CompactionCallUsage[] {
  return calls
    .filter((c) => found.summaryCalls.has(c.call_id))
    .map((c) => {
      const u = c.usage.normalized;
      return {
        call_id: c.call_id,
        participant: found.root.participant,
        summary_record: found.summaryCalls.get(c.call_id)!.summaryUuid,
        tokens: { input: u?.input ?? 0, cache_creation: u?.cache_creation ?? 0, cache_read: u?.cached_input ?? 0, output: u?.output ?? 0, reasoning: u?.reasoning ?? 0 },
      };
    });
}
