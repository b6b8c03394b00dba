import cliProgress from 'cli-progress';
import { formatTokens } from '../pipelines/usage-report.js';
import type { SampleInfo } from '../schemas/run-info.js';

/**
 * What `roller collect` shows while it runs: on a terminal a progress bar (done / running / failed, tokens so
 * far) with failures logged above it; otherwise one plain line per started and finished sample.
 */
export class CollectProgress {
  private readonly multi: cliProgress.MultiBar | undefined;
  private bar: cliProgress.SingleBar | undefined;
  private running = 0;
  private failed = 0;
  private tokens = 0;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {
    if (out.isTTY) {
      this.multi = new cliProgress.MultiBar(
        { stream: out, format: 'samples [{bar}] {value}/{total} | running {running} | failed {failed} | tokens {tokens}', hideCursor: true, clearOnComplete: false },
        cliProgress.Presets.shades_classic,
      );
    }
  }

  started(r: { index: number; task_id: string; model: string }, total: number): void {
    this.running++;
    if (this.multi) {
      this.bar ??= this.multi.create(total, 0, this.payload());
      this.bar.update(this.payload());
    } else this.out.write(`started ${r.index}_${r.task_id} (${r.model})\n`);
  }

  finished(s: SampleInfo, p: { done: number; total: number }): void {
    if (s.status !== 'skipped') this.running = Math.max(0, this.running - 1);
    if (s.status === 'error' || s.status === 'timeout') this.failed++;
    const u = s.usage;
    if (u) this.tokens += u.input + u.cached_input + u.cache_creation + u.output;
    const notes = [...(s.runtime.warnings ?? []).map((w) => `warning: ${w}`), ...subAgentsNotCompleted(s)].map((w) => `\n  ${w}`).join('');
    const tokens = u ? ` ${u.requests} requests, ${formatTokens({ input: u.input, cache_creation: u.cache_creation, cache_read: u.cached_input, output: u.output, reasoning: u.reasoning })}` : '';
    const line = `[${p.done}/${p.total}] ${s.status.padEnd(7)} ${s.index}_${s.task_id} (${s.model})${tokens}${s.error ? `: ${s.error.message}` : ''}${notes}`;
    if (this.multi) {
      this.bar ??= this.multi.create(p.total, 0, this.payload());
      if (s.status === 'error' || s.status === 'timeout' || notes) this.multi.log(`${line}\n`);
      this.bar.update(p.done, this.payload());
    } else this.out.write(`${line}\n`);
  }

  stop(): void {
    this.multi?.stop();
  }

  private payload() {
    return { running: this.running, failed: this.failed, tokens: this.tokens };
  }
}

/** The sample's sub-agents that did not complete (failed, running, unknown, missing), each with its status and reason. */
export function subAgentsNotCompleted(s: SampleInfo): string[] {
  return (s.runtime.participants ?? [])
    .filter((p) => p.role === 'child' && p.status !== 'completed')
    .map((p) => `sub-agent ${p.participant} ${p.status}${p.reason ? `: ${p.reason}` : p.status_source ? ` (${p.status_source})` : ''}; the sample's own status is ${s.status}`);
}

/** What `roller reprocess` shows: a progress bar on a terminal (errors logged above it), else one line per sample. */
export class ReprocessProgress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private failed = 0;
  private started = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {
    if (out.isTTY) this.bar = new cliProgress.SingleBar({ stream: out, format: 'samples [{bar}] {value}/{total} | errors {failed}', hideCursor: true }, cliProgress.Presets.shades_classic);
  }

  sample(row: { sample: string; status: string; error?: { message: string } }, p: { done: number; total: number }): void {
    if (row.status === 'error') this.failed++;
    const line = `[${p.done}/${p.total}] ${row.status.padEnd(9)} ${row.sample}${row.error ? `: ${row.error.message}` : ''}`;
    if (!this.bar) {
      this.out.write(`${line}\n`);
      return;
    }
    if (!this.started) {
      this.bar.start(p.total, 0, { failed: 0 });
      this.started = true;
    }
    if (row.status === 'error') this.out.write(`\n${line}\n`);
    this.bar.update(p.done, { failed: this.failed });
  }

  stop(): void {
    if (this.started) this.bar?.stop();
  }
}
