import type { Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import { REPROCESS_TARGETS, type ReprocessTarget } from '../pipelines/reprocess/targets.js';
import { positiveInt, reportSinkFailures, sinkSpecsOf, withSinkOptions } from './options.js';
import { printLine } from './output.js';
import { rollerVersion } from '../core/version.js';

interface ReprocessCliOptions {
  output: string;
  concurrency: number;
  only?: string;
  fromWire?: boolean;
  verify: boolean;
  json?: boolean;
  sink?: string[];
  sinkOption?: string[];
  sinkOptions?: string;
  sinkTimeout?: number;
  shard?: string;
}

/** `roller reprocess`: a run projected again from its archive. */
export function registerReprocessCommand(program: Command): void {
  program
    .command('reprocess')
    .description('project a run (or one sample) again from its archive — calls.jsonl and raw/ (native files, wire log) — by the stages collect uses, into a new run tree; the input is never modified')
    .argument('<dir>', 'a run directory, or one sample directory of a run')
    .requiredOption('--output <dir>', 'the new run tree (a sample already there from the same source is left alone)')
    .option('--concurrency <n>', 'samples at once, each in its own worker thread', positiveInt, 1)
    .option('--only <targets>', `re-project only these output families (${REPROCESS_TARGETS.join(',')}); the others are copied from the archive`)
    .option('--from-wire', "decode the calls again from each capture's raw/wire.frames with the proxy's decoders (after a decoder changed), instead of taking calls.jsonl")
    .option('--no-verify', "use each sample's archive without checking its published capture (hashes, attribution, references) first; recorded in reprocess.jsonl")
    .option('--shard <I/N|env>', 'only the samples whose request index ≡ I (mod N), into a shard of the run that roller merge joins; env: from ROLLER_SHARD, a Slurm array or a Kubernetes Indexed Job')
    .option('--json', 'print the report as JSON on stdout');
  withSinkOptions(program.commands.at(-1)!)
    .action(async (dir: string, opts: ReprocessCliOptions) => {
      const only = opts.only ? opts.only.split(',').map((t) => t.trim()) : null;
      const unknown = only?.filter((t) => !(REPROCESS_TARGETS as readonly string[]).includes(t)) ?? [];
      if (unknown.length > 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--only ${opts.only}: unknown ${unknown.join(', ')} (choose from ${REPROCESS_TARGETS.join(', ')})`);
      const progress = new (await import('./collect-progress.js')).ReprocessProgress();
      const report = await (await import('../pipelines/reprocess/run.js')).reprocess({
        input: dir,
        output: opts.output,
        concurrency: opts.concurrency,
        only: only as ReprocessTarget[] | null,
        ...(opts.fromWire ? { fromWire: true } : {}),
        ...(opts.shard ? { shard: (await import('../pipelines/scale/shard.js')).parseShard(opts.shard) } : {}),
        ...(opts.verify ? {} : { noVerify: true }),
        sinkSpecs: await sinkSpecsOf(opts),
        ...(opts.sinkTimeout ? { sinkTimeoutS: opts.sinkTimeout } : {}),
        rollerVersion,
        onSample: (row, p) => progress.sample(row, p),
      });
      progress.stop();
      if (opts.json) await printLine(JSON.stringify(report));
      else await printLine(report.output);
      process.stderr.write(
        `roller reprocess: ${report.written} written, ${report.unchanged} unchanged (already reprocessed from the same source), ${report.errors} errors${report.wroteRunFiles ? '' : '; nothing new was written'}\n`,
      );
      process.exitCode = report.errors > 0 ? 1 : 0;
      reportSinkFailures('reprocess', report.sinkFailures);
    });
}
