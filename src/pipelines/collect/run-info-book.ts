import { relative } from 'node:path';
import { RUN_INFO_SCHEMA, type ResumeEntry, type RunInfo, type SampleInfo } from '../../schemas/run-info.js';
import { runSummary, type RunSftCounts } from '../run-summary.js';
import { runUsageTotals } from '../run-usage.js';
import { sampleDirOf } from './sample.js';
import { TrainingTally } from './training-summary.js';

/** What a run's info.json says that does not change while it runs. */
export interface RunInfoFixed {
  rollerVersion: string;
  runName: string;
  runDir: string;
  createdAt: string;
  config: Record<string, unknown>;
  /** Why the harness ran without its delegation tool (HarnessRunner.delegationOff), or null. */
  delegationOff: string | null;
  requests: { total: number; tasks: number; models: number };
  resumeHistory: readonly ResumeEntry[];
  /** roller merge: the parts the run was joined from. */
  mergedFrom?: NonNullable<RunInfo['merged_from']>;
}

/** A collect run's info.json as it goes: its state, a row per finished sample, its errors; snapshot() writes out. */
export class RunInfoBook {
  state: RunInfo['state'] = 'initializing';
  readonly errors: RunInfo['errors'] = [];
  /** Set once the run-level SFT files are written (seeds/003 §4.4). */
  sftCounts: RunSftCounts | undefined;
  private readonly rows = new Map<number, RunInfo['samples'][number]>();
  private readonly training = new TrainingTally();

  constructor(private readonly fixed: RunInfoFixed) {}

  /** A finished (or reused: 'skipped') sample's row. */
  add(info: SampleInfo, status = info.status): void {
    this.rows.set(info.index, {
      index: info.index,
      task_id: info.task_id,
      model: info.model,
      status,
      error: info.error,
      path: relative(this.fixed.runDir, sampleDirOf(this.fixed.runDir, { index: info.index, task: { id: info.task_id }, model: { id: info.model } })),
      usage: info.usage,
      ...(info.grade ? { grade: info.grade.status } : {}),
    });
    this.training.add(info);
  }

  snapshot(): RunInfo {
    const f = this.fixed;
    const list = [...this.rows.values()].sort((a, b) => a.index - b.index);
    return {
      schema: RUN_INFO_SCHEMA,
      roller_version: f.rollerVersion,
      run_name: f.runName,
      state: this.state,
      created_at: f.createdAt,
      updated_at: new Date().toISOString(),
      config: f.config,
      ...(f.delegationOff ? { delegation: { available: false as const, reason: f.delegationOff } } : {}),
      progress: { total: f.requests.total, processed: list.length, pending: f.requests.total - list.length },
      requests: { tasks: f.requests.tasks, models: f.requests.models },
      summary: runSummary(list, { sft: this.sftCounts, training: this.training.summary() }),
      usage: runUsageTotals(list),
      samples: list,
      errors: this.errors,
      ...(f.resumeHistory.length > 0 ? { resume_history: [...f.resumeHistory] } : {}),
      ...(f.mergedFrom ? { merged_from: f.mergedFrom } : {}),
    };
  }
}

/** The resume history to carry on: the previous run's, and this resume's entry with what it changed (concurrency, retries). */
export function resumeHistoryOf(previous: RunInfo | undefined, resuming: boolean, config: Record<string, unknown>, tookOver: string | null, cleaned: ResumeEntry['cleaned']): ResumeEntry[] {
  const history: ResumeEntry[] = [...(previous?.resume_history ?? [])];
  if (resuming && previous) {
    const changes: ResumeEntry['changes'] = {};
    for (const k of ['concurrency', 'retries']) if (previous.config[k] !== undefined && previous.config[k] !== config[k]) changes[k] = { from: previous.config[k], to: config[k] };
    history.push({ at: new Date().toISOString(), took_over: tookOver, cleaned, changes });
  }
  return history;
}
