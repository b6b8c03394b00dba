import { readdirSync, readFileSync } from 'node:fs';

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

/** One process's scheduler figures from /proc (ns and counts since the threads started; main thread apart). */
export interface SchedStats {
  /** Time runnable but waiting for a core (ns): the main thread's, the other threads'. */
  mainWaitNs: number;
  otherWaitNs: number;
  /** Times the main thread was put on a core: each is a wake-up or a preemption. */
  mainSlices: number;
}

/**
 * This process's /proc/self/task/<tid>/schedstat, summed: how long its threads waited for a core while runnable. On a
 * machine the client, the proxy and the upstream share, time a thread queues while the machine has idle time is
 * where a proxy can lose req/s without costing more CPU. Zeros where /proc has no schedstat.
 */
export function schedStats(): SchedStats {
  const s: SchedStats = { mainWaitNs: 0, otherWaitNs: 0, mainSlices: 0 };
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return s;
  }
  for (const tid of tids) {
    let fields: number[];
    try {
      fields = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    } catch {
      continue; // a thread that ended between the listing and the read
    }
    if (Number(tid) === process.pid) {
      s.mainWaitNs += fields[1] ?? 0;
      s.mainSlices += fields[2] ?? 0;
    } else s.otherWaitNs += fields[1] ?? 0;
  }
  return s;
}
