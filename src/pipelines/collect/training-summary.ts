import type { SampleInfo } from '../../schemas/run-info.js';

/** run info.json summary.training (seeds/003): what the training files hold of the processed samples, and why not. */
export interface TrainingSummary {
  /** Samples processed, reused ones included. */
  processed: number;
  sft_eligible: number;
  /** Ineligible samples by category: sample_failed, thinking_effort_mismatch, wire_effort_mismatch, incomplete_trajectory, incomplete_delegation, no_sft. */
  excluded: Record<string, number>;
  thinking_mismatch: number;
  wire_effort_mismatch: number;
  /** Requests that did not state the effort asked for, or none readable: not excluded (seeds/003), only counted. */
  wire_effort_unverified: number;
  incomplete: number;
  /** A warning only: aliases are legitimate. */
  model_name_mismatch: number;
  /** Samples with a sub-agent that did not complete (failed, running, unknown, missing), whatever their own status; absent when none. */
  subagents_not_completed?: number;
  /** With the server's token ids: the samples, and their prompts checked, continued and broken; absent without. */
  token_continuity?: { samples: number; checked: number; continuous: number; breaks: number };
}

const CATEGORIES = ['thinking_effort_mismatch', 'wire_effort_mismatch', 'incomplete_trajectory', 'incomplete_delegation'] as const;

/** Counts each processed sample once (the latest info of its index wins), from the same audits the exclusion reads. */
export class TrainingTally {
  private readonly byIndex = new Map<number, SampleInfo>();

  add(info: SampleInfo): void {
    this.byIndex.set(info.index, info);
  }

  summary(): TrainingSummary {
    const s: TrainingSummary = { processed: 0, sft_eligible: 0, excluded: {}, thinking_mismatch: 0, wire_effort_mismatch: 0, wire_effort_unverified: 0, incomplete: 0, model_name_mismatch: 0 };
    for (const info of this.byIndex.values()) {
      s.processed++;
      const r = info.runtime as Record<string, { status?: string } | undefined> & SampleInfo['runtime'];
      const eligibility = info.runtime.sft_eligibility;
      if (eligibility?.eligible) s.sft_eligible++;
      else {
        const reason = eligibility?.reason ?? '';
        const category = info.status !== 'ok' && info.status !== 'skipped' ? 'sample_failed' : (CATEGORIES.find((c) => reason.startsWith(c)) ?? 'no_sft');
        s.excluded[category] = (s.excluded[category] ?? 0) + 1;
      }
      if (r.thinking_audit?.status === 'mismatch') s.thinking_mismatch++;
      if (r.wire_effort_audit?.status === 'mismatch') s.wire_effort_mismatch++;
      if (r.wire_effort_audit?.status === 'unverified' || r.wire_effort_audit?.status === 'not_observable') s.wire_effort_unverified++;
      if (r.completion_audit?.status === 'flagged') s.incomplete++;
      if (r.model_identity_audit?.status === 'name_mismatch') s.model_name_mismatch++;
      if ((info.runtime.participants ?? []).some((p) => p.role === 'child' && p.status !== 'completed')) s.subagents_not_completed = (s.subagents_not_completed ?? 0) + 1;
      const tokens = info.runtime.capture?.token_continuity;
      if (tokens) {
        const t = (s.token_continuity ??= { samples: 0, checked: 0, continuous: 0, breaks: 0 });
        t.samples++;
        t.checked += tokens.checked;
        t.continuous += tokens.continuous;
        t.breaks += tokens.breaks;
      }
    }
    return s;
  }
}
