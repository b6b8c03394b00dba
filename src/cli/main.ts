import { Command } from 'commander';
import { abandonedSinks } from '../sinks/user-sink.js';
import { ErrorCode, isRollerError } from '../core/errors.js';
import { registerCollectCommand, registerOracleCommand } from './collect-command.js';
import { registerConvertCommands } from './convert-commands.js';
import { registerHarnessCommands } from './harness-commands.js';
import { PipeClosed } from './output.js';
import { registerProxyCommands } from './proxy-commands.js';
import { registerRecordCommands } from './record-commands.js';
import { registerReprocessCommand } from './reprocess-command.js';
import { registerScaleCommands } from './scale-commands.js';
import { registerViewCommand } from './view-command.js';
import { registerQueryCommand } from './query-command.js';
import { rollerVersion } from '../core/version.js';

/** The CLI: each command group is registered from its own file. */
export function buildProgram(): Command {
  const program = new Command('roller')
    .description('Record what coding-agent CLIs really did, and stream it into analysis and training data.')
    .version(rollerVersion)
    .showHelpAfterError()
    // A usage error (unknown option, missing argument, bad value) exits 2, as a refused run does; help and --version 0.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  registerRecordCommands(program);
  registerProxyCommands(program);
  registerHarnessCommands(program);
  registerConvertCommands(program);
  registerReprocessCommand(program);
  registerCollectCommand(program);
  registerOracleCommand(program);
  registerScaleCommands(program);
  registerViewCommand(program);
  registerQueryCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  // Everything roller writes is its user's alone (captures hold prompts, code and tool output): 0600 files, 0700 dirs.
  process.umask(0o077);
  try {
    await buildProgram().parseAsync(argv);
    // A user's sink given up past its deadline may still hold the event loop (a timer, a socket): the command is done.
    if (abandonedSinks() > 0) process.exit(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof PipeClosed) return; // the reader left; the exit code says what we found so far
    process.exitCode = reportFailure(err, (text) => process.stderr.write(text), process.env.ROLLER_DEBUG === '1');
  }
}

/** Faults of the machine, not of roller: what each means for the user. */
const MACHINE_FAULTS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the filesystem is read-only',
  EIO: 'the disk reported an I/O error',
};

/**
 * The machine fault at the root of an error (its cause chain followed), if one is. A refusal of what the user chose
 * (INVALID_OPTIONS: "--output X is not writable (EROFS)") stays a usage error; a plain error's message is read too.
 */
function machineFault(err: unknown): { code: string; path?: string; message: string } | undefined {
  if (isRollerError(err, ErrorCode.INVALID_OPTIONS)) return undefined;
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, path, message } = e as { code?: unknown; path?: unknown; message?: unknown };
    if (typeof code === 'string' && code in MACHINE_FAULTS) return { code, ...(typeof path === 'string' ? { path } : {}), message: String(message ?? code) };
    const m = !isRollerError(e) && typeof message === 'string' ? /\b(ENOSPC|EDQUOT|EROFS|EIO)\b/.exec(message) : null;
    if (m) return { code: m[1]!, message: message as string };
  }
  return undefined;
}

/**
 * What a command that failed says, and its exit code: 2 for roller's own refusals (usage), 69 for a service that did
 * not answer (Redis, sbatch, an OTLP collector: EX_UNAVAILABLE), 74 for a fault of the machine (a full disk, a
 * read-only filesystem: EX_IOERR), 70 for anything else (a bug).
 */
export function reportFailure(err: unknown, write: (text: string) => void, debug: boolean): number {
  const fault = machineFault(err);
  if (fault) {
    write(`roller: ${MACHINE_FAULTS[fault.code]} (${fault.code}${fault.path ? ` at ${fault.path}` : ''}): ${isRollerError(err) ? `${err.message} [${err.code}]` : fault.message}. Free space (or make it writable) and run the same command again: what was written before stays, and a run resumes with --resume\n`);
    return 74;
  }
  if (isRollerError(err, ErrorCode.SERVICE_UNAVAILABLE)) {
    write(`roller: ${err.message} [${err.code}]\n`);
    return 69; // EX_UNAVAILABLE: not a usage error; run again once the service answers
  }
  if (isRollerError(err)) {
    write(`roller: ${err.message} [${err.code}]\n`);
    return 2;
  }
  // Not one of roller's own errors: one line saying what, and what to do; the stack only when asked for.
  const e = err instanceof Error ? err : new Error(String(err));
  write(`roller: unexpected error: ${e.message}\n`);
  write(debug ? `${e.stack ?? ''}\n` : 'roller: this is a bug in roller; rerun with ROLLER_DEBUG=1 to see where it happened, and report it with that output\n');
  return 70;
}
