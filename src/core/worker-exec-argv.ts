/**
 * Options a worker thread must not be given:
 * - `--input-type`: only for the main entry; `node --input-type=module -e '...'` (a user's one-line script using
 *   roller) made every worker fail at start with ERR_INPUT_TYPE_NOT_ALLOWED;
 * - V8 options: process-wide, so a worker has them anyway, and Node refuses them in a worker's execArgv
 *   (ERR_WORKER_INVALID_EXEC_ARGV; it filters them only from an execArgv it inherits, and roller's is given) —
 *   `node --max-old-space-size=8192 roller reprocess …` made every worker fail at start. Those a user is
 *   likely to start node with.
 */
const DROPPED = new Set(['--input-type', '--single-threaded-gc', '--max-old-space-size', '--max-semi-space-size', '--expose-gc', '--stack-size', '--jitless']);
/** Those that may take their value as the next argument (`--input-type module`). */
const WITH_VALUE = new Set(['--input-type', '--max-old-space-size', '--max-semi-space-size', '--stack-size']);

/** The Node options a worker thread of roller starts with: the process's own, less DROPPED. */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.split('=')[0]!.replace(/_/g, '-'); // V8 takes --max_old_space_size too
    if (!DROPPED.has(name)) {
      out.push(a);
      continue;
    }
    if (!a.includes('=') && WITH_VALUE.has(name) && i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) i++;
  }
  return out;
}
