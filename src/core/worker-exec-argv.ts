import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Options a worker thread must not be given:
 * - `--input-type`: only for the main entry; `node --input-type=module -e '...'` (a user's one-line script using
 *   roller) made every worker fail at start with ERR_INPUT_TYPE_NOT_ALLOWED;
 * - V8 options: process-wide, so a worker has them anyway, and Node refuses them in a worker's execArgv
 *   (ERR_WORKER_INVALID_EXEC_ARGV; it filters them only from an execArgv it inherits, and roller's is given) —
 *   `node --max-old-space-size=8192 roller reprocess …` made every worker fail at start. Those a user is
 *   likely to start node with.
 */
const DROPPED = new Set(['--input-type', '--single-threaded-gc', '--max-old-space-size', '--max-semi-space-size', '--initial-old-space-size', '--no-memory-reducer', '--expose-gc', '--stack-size', '--jitless']);

/**
 * A user may start node with a large initial old generation. V8 options are process-wide, and a worker isolate created
 * later would get it too (a reprocess worker's heap growing to it before its first full collection). Workers are sized
 * by their resourceLimits, so the option is set back to V8's default (0: none) before the first worker starts — it is
 * read when an isolate is created, so the main thread's heap keeps its own.
 */
let workerHeapDefaults = false;
function useDefaultWorkerHeap(): void {
  if (workerHeapDefaults) return;
  workerHeapDefaults = true;
  if (process.execArgv.some((a) => a.replace(/_/g, '-').startsWith('--initial-old-space-size'))) setFlagsFromString('--initial-old-space-size=0');
}

/** The Node options a worker thread of roller starts with: the process's own, less DROPPED. */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] {
  return withoutOptions(argv, (a) => DROPPED.has(a.split('=')[0]!.replace(/_/g, '-'))); // V8 takes --max_old_space_size too
}

/**
 * A worker thread started with the process's Node options less those a worker may not take. DROPPED covers the
 * usual ones; for any other (`--v8-pool-size`, …) Node itself says which it refuses (ERR_WORKER_INVALID_EXEC_ARGV,
 * naming them), and the worker is started once more without them — rather than a list of every per-process option
 * of every Node version.
 */
export function startWorker(script: string | URL, options: WorkerOptions = {}, argv: readonly string[] = process.execArgv): Worker {
  useDefaultWorkerHeap(); // the process's own options: what its isolates are created with, whatever argv the worker gets
  const execArgv = workerExecArgv(argv);
  try {
    return new Worker(script, { ...options, execArgv });
  } catch (err) {
    const refused = refusedFlags(err);
    if (refused.size === 0) throw err;
    return new Worker(script, { ...options, execArgv: withoutOptions(execArgv, (a) => refused.has(a)) });
  }
}

/** The flags an ERR_WORKER_INVALID_EXEC_ARGV names ("Initiated Worker with invalid execArgv flags: --a, --b=1"). */
function refusedFlags(err: unknown): Set<string> {
  const e = err as { code?: string; message?: string };
  if (e?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || typeof e.message !== 'string') return new Set();
  const list = e.message.slice(e.message.indexOf(':') + 1);
  return new Set(list.split(',').map((f) => f.trim()).filter((f) => f.startsWith('-')));
}

/**
 * argv without the options `drop` names, and the value of one given as `--option value` (in execArgv a word that
 * does not start with '-' is always the value of the option before it).
 */
function withoutOptions(argv: readonly string[], drop: (arg: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!drop(a)) {
      out.push(a);
      continue;
    }
    if (!a.includes('=') && i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) i++;
  }
  return out;
}
