import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import type { OpenClawMode } from '../harnesses/openclaw/launch.js';
import type { WireTraceMode } from '../sinks/wire-trace/sink.js';

/** Option parsers and the --sink options the commands share (commander calls each with the raw text). */

/** --sink SPEC (repeatable), --sink-option name.key=value (repeatable), --sink-options FILE: the same on collect, reprocess and convert. */
export function withSinkOptions(command: Command): Command {
  return command
    .option('--sink <spec>', 'repeatable; a sink of your own: a registered calls or samples sink (calls-jsonl, wire-trace, tools-capture, run-sft, run-sft-segments) or a module path / package name exporting a SinkModule', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--sink-option <name.key=value>', 'repeatable; an option of a --sink, by its name (a registered name, or the module file name without extension)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--sink-options <file>', 'a JSON file {"<sink name>": {options}} for the --sink sinks')
    .option('--sink-timeout <s>', 'seconds a --sink may take over one item, and to finish at the end, before it is reported failed and no longer waited for (default 120)', timerSeconds);
}

export async function sinkSpecsOf(opts: { sink?: string[]; sinkOption?: string[]; sinkOptions?: string }): Promise<import('../pipelines/user-sinks.js').SinkSpec[]> {
  if (!opts.sink && !opts.sinkOption && !opts.sinkOptions) return [];
  let file: Record<string, Record<string, unknown>> = {};
  if (opts.sinkOptions) {
    try {
      file = JSON.parse(await readFile(opts.sinkOptions, 'utf8')) as Record<string, Record<string, unknown>>;
    } catch (err) {
      throw new RollerError(ErrorCode.INVALID_OPTIONS, `--sink-options ${opts.sinkOptions}: ${(err as Error).message}`);
    }
  }
  return (await import('../pipelines/user-sinks.js')).sinkSpecs(opts.sink ?? [], opts.sinkOption ?? [], file);
}

export function reportSinkFailures(command: string, failures: readonly { sink: string; at: string | null; message: string }[] | undefined): void {
  for (const f of failures ?? []) process.stderr.write(`roller ${command}: sink ${f.sink} failed${f.at ? ` at ${f.at}` : ''}: ${f.message} (the run's own files are complete)\n`);
  if ((failures?.length ?? 0) > 0) process.exitCode = 1;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number, at least 1');
  return n;
}

/** The longest timer Node keeps (2^31 - 1 ms): a longer one fires at once, so a timeout past it is refused. */
export const MAX_TIMER_S = 2_147_483;

/** Seconds for a timer: a whole number from 1 to MAX_TIMER_S (about 24.8 days). */
export function timerSeconds(value: string): number {
  const n = positiveInt(value);
  if (n > MAX_TIMER_S) throw new InvalidArgumentError(`at most ${MAX_TIMER_S} seconds (about 24.8 days: the longest timer Node keeps; a longer one would fire at once)`);
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number, at least 0');
  return n;
}

export function captureDebugOption(value: string): 'on-error' | 'full' | 'off' {
  if (value !== 'on-error' && value !== 'full' && value !== 'off') throw new InvalidArgumentError('on-error, full or off');
  return value;
}

export function portOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number from 0 to 65535');
  return n;
}

export function wireTraceOption(value: string): WireTraceMode {
  // Checked here without loading the sinks (the CLI loads a command's modules only when it runs).
  if (value !== 'off' && value !== 'actf' && value !== 'full') throw new InvalidArgumentError('off, actf or full');
  return value;
}

export function openclawModeOption(value: string): OpenClawMode {
  if (value !== 'gateway' && value !== 'exec') throw new InvalidArgumentError('gateway or exec');
  return value;
}
