import { mkdir, rm } from '../../core/thread-fs.js';
import { join } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { itemsOf } from '../../core/document-sink.js';
import { createSftSegmentsSink } from '../../sinks/sft-segments/sink.js';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { NativeCompactions } from '../../schemas/native-capture.js';
import type { TrajectoryConversion } from '../../schemas/run-info.js';
import { projectSegments, type SegmentMeta } from '../../transforms/sft/segments.js';
import type { z } from 'zod';

type Conversion = z.infer<typeof TrajectoryConversion>;

/**
 * A compacted main context (seeds/003 §4.3): sft_segments/NNNN.json replace the linear trace_SFT.json (which
 * would join windows the model never saw at once). Updates `conversion` in place with the outcome of both
 * targets and returns the segment metadata for info.json, or null when segments are unavailable — then
 * SFT is unavailable with the reason, raw and ACTF stay.
 */
export async function writeCompactionSegments(dir: string, actf: Actf | null, calls: readonly Call[], found: NativeCompactions, o: { keepThinking: boolean; captureCalls: boolean }, conversion: Conversion[]): Promise<SegmentMeta[] | null> {
  const keepThinking = o.keepThinking;
  await rm(join(dir, 'trace_SFT.json'), { force: true });
  const set = (target: Conversion['target'], status: Conversion['status'], reason: string | null) => {
    const at = conversion.findIndex((c) => c.target === target);
    const entry = { target, status, reason };
    if (at === -1) conversion.push(entry);
    else conversion[at] = entry;
  };
  const linear = `the main context was compacted ${found.compactions.length} time(s): linear SFT would join windows the model never saw at once`;
  if (!o.captureCalls) {
    // seeds/003: segments are opt-in, rebuilt from the captured requests.
    set('sft', 'unavailable', `${linear}; its compaction segments are written with --capture-calls`);
    set('sft_segments', 'unavailable', 'compaction segments are opt-in: collect with --capture-calls');
    return null;
  }
  const missing = found.compactions.filter((c) => ![...found.summaryCalls.values()].includes(c));
  const projection = !actf
    ? { status: 'unavailable' as const, reason: 'no ACTF' }
    : missing.length > 0
      ? { status: 'unavailable' as const, reason: `no captured call wrote the summary of compaction ${missing.map((c) => c.boundary).join(', ')}` }
      : projectSegments(
          actf,
          calls.filter((c) => c.participant_id === found.root.participant || found.summaryCalls.has(c.call_id)),
          [...found.summaryCalls].map(([summaryCallId, c]) => ({ summaryCallId, source: c.source })),
          { keepThinking },
        );
  if (projection.status !== 'ok') {
    set('sft', 'unavailable', `${linear}; compaction segments unavailable: ${projection.reason}`);
    set('sft_segments', 'unavailable', projection.reason);
    return null;
  }
  await mkdir(join(dir, 'sft_segments'), { recursive: true });
  await createSftSegmentsSink({ dir }).consume(itemsOf(...projection.segments), createStageContext());
  set('sft', 'unavailable', `${linear}; see sft_segments/`);
  set('sft_segments', 'ok', null);
  return projection.segments.map((s) => s.meta);
}

/** A call the native transcript does not hold as a message: a compaction summary, with its wire usage. */
/** A call of a participant whose tokens no native message holds (OpenCode's title requests): counted in the sample's usage. */
export interface AuxiliaryCallUsage {
  call_id: string;
  participant: string;
  /** Why no native message holds it (the adapter's auxiliaryCall rule). */
  rule: string;
  tokens: { input: number; cache_creation: number; cache_read: number; output: number; reasoning: number };
}

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
export function compactionCallUsage(found: NativeCompactions, calls: readonly Call[]): CompactionCallUsage[] {
  return calls
    .filter((c) => found.summaryCalls.has(c.call_id))
    .map((c) => ({ call_id: c.call_id, participant: found.root.participant, summary_record: found.summaryCalls.get(c.call_id)!.summaryRecord, tokens: tokensOfCall(c) }));
}

/** A call's tokens by kind, as its response reported them (0 where it reported none). */
export function tokensOfCall(c: Call): CompactionCallUsage['tokens'] {
  const u = c.usage.normalized;
  return { input: u?.input ?? 0, cache_creation: u?.cache_creation ?? 0, cache_read: u?.cached_input ?? 0, output: u?.output ?? 0, reasoning: u?.reasoning ?? 0 };
}
