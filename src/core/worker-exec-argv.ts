/**
 * The Node options a worker thread of roller starts with: the process's own, less those that only make
 * sense for the main entry. A worker inherits process.execArgv, and `node --input-type=module -e '...'`
 * (a user's one-line script using roller) made every worker fail at start with ERR_INPUT_TYPE_NOT_ALLOWED.
 */
export function workerExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--input-type')) {
      if (a === '--input-type') i++; // its value is the next argument
      continue;
    }
    out.push(a);
  }
  return out;
}
