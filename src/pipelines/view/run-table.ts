import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunInfo, SampleInfo } from '../../schemas/run-info.js';
import type { UsageTotals } from '../../schemas/common.js';

/** One row of the run page: the run's info.json row, and what the sample's own info.json adds once read. */
export interface SampleRow {
  index: number;
  task_id: string;
  model: string;
  status: string;
  error: string | null;
  path: string;
  usage: UsageTotals | null;
  grade: string | null;
  /** From the sample's info.json (null until it is read, or when it cannot be: `unreadable` says why). */
  harness: string | null;
  score: number | null;
  sft: { eligible: boolean; reason: string | null } | null;
  duration_ms: number | null;
  subagents: number | null;
  unreadable?: string;
}

export interface TableQuery {
  offset: number;
  limit: number;
  /** A column of SampleRow (tokens: input+cache+output; cost). */
  sort: string;
  desc: boolean;
  /** Words that must all appear in task, model, status, harness, error or SFT reason. */
  q: string;
  status: string;
}

export interface TablePage {
  rows: SampleRow[];
  /** Rows that pass the filter. */
  matched: number;
  total: number;
  /** Samples whose info.json is read (sorting and filtering by their columns is complete when indexed = total). */
  indexed: number;
}

const tokensOf = (u: UsageTotals | null) => (u ? u.input + u.cached_input + u.cache_creation + u.output : null);

const SORT_KEYS: Record<string, (r: SampleRow) => string | number | null> = {
  index: (r) => r.index,
  task: (r) => r.task_id,
  model: (r) => r.model,
  harness: (r) => r.harness,
  status: (r) => r.status,
  grade: (r) => r.grade,
  score: (r) => r.score,
  sft: (r) => (r.sft ? (r.sft.eligible ? 1 : 0) : null),
  tokens: (r) => tokensOf(r.usage),
  cost: (r) => r.usage?.cost_usd ?? null,
  duration: (r) => r.duration_ms,
  subagents: (r) => r.subagents,
};
export const TABLE_SORT_KEYS = Object.keys(SORT_KEYS);

/**
 * The run page's table over a run of any size: the rows of the run's info.json at once, each sample's own
 * info.json read in the background (a few at a time), and queries answered a page at a time — the browser never
 * holds the run. A row holds only short fields (~300 bytes; 10,000 samples are a few MB).
 */
export class RunTable {
  readonly rows: SampleRow[];
  private indexedCount = 0;
  private indexing: Promise<void> | null = null;

  constructor(
    private readonly dir: string,
    info: RunInfo,
  ) {
    this.rows = info.samples.map((s) => ({
      index: s.index,
      task_id: s.task_id,
      model: s.model,
      status: s.status,
      error: s.error?.message ?? null,
      path: s.path,
      usage: s.usage,
      grade: s.grade ?? null,
      harness: null,
      score: null,
      sft: null,
      duration_ms: null,
      subagents: null,
    }));
  }

  get indexed(): number {
    return this.indexedCount;
  }

  /** Starts reading the samples' info.json files (once); resolves when all are read. */
  index(concurrency = 8): Promise<void> {
    this.indexing ??= (async () => {
      let next = 0;
      const worker = async () => {
        while (next < this.rows.length) {
          const row = this.rows[next++]!;
          await this.enrich(row);
          this.indexedCount++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, this.rows.length) }, worker));
    })();
    return this.indexing;
  }

  private async enrich(row: SampleRow): Promise<void> {
    try {
      const info = JSON.parse(await readFile(join(this.dir, row.path, 'info.json'), 'utf8')) as SampleInfo;
      row.harness = info.harness?.name ?? null;
      const scores = Object.values(info.grade?.scores ?? {});
      row.score = scores.length > 0 ? scores[0]! : null;
      row.sft = info.runtime?.sft_eligibility ?? null;
      row.duration_ms = info.elapsed_ms ?? null;
      row.subagents = (info.runtime?.participants ?? []).filter((p) => p.role !== 'root').length;
    } catch (err) {
      row.unreadable = `${join(row.path, 'info.json')}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
  }

  query(q: TableQuery): TablePage {
    const words = q.q.toLowerCase().split(/\s+/).filter(Boolean);
    const matches = (r: SampleRow) => {
      if (q.status && r.status !== q.status) return false;
      if (words.length === 0) return true;
      const text = `${r.task_id} ${r.model} ${r.status} ${r.harness ?? ''} ${r.grade ?? ''} ${r.error ?? ''} ${r.sft?.reason ?? ''}`.toLowerCase();
      return words.every((w) => text.includes(w));
    };
    const key = SORT_KEYS[q.sort] ?? SORT_KEYS.index!;
    const rows = this.rows.filter(matches);
    // Unknown values (not read yet, or not there) sort last in either direction.
    rows.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
      const c = x < y ? -1 : x > y ? 1 : a.index - b.index;
      return q.desc ? -c : c;
    });
    return { rows: rows.slice(q.offset, q.offset + q.limit), matched: rows.length, total: this.rows.length, indexed: this.indexedCount };
  }
}
