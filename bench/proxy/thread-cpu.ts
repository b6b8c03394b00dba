import { readFileSync } from 'node:fs';

/** Linux's USER_HZ (the unit of /proc's CPU times): 100 on every Linux build node runs on. */
const CLOCK_TICKS = 100;

/**
 * CPU of this process's main thread alone (user + system, ms; 10 ms ticks), from /proc: the thread that forwards, apart
 * from a projection worker, the thread pool and V8's helpers. NaN where /proc has no per-thread stat.
 */
export function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
