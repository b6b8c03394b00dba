import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { isolatedCommand, parseInitReport, type Isolation } from './isolation.js';

export interface ProcessPlan {
  command: string;
  args: string[];
  cwd: string;
  /** The whole environment: nothing is inherited that is not listed here. */
  env: Record<string, string>;
  /** A file given to the process as its stdin (a prompt); without it stdin is closed. */
  stdin?: string;
}

export interface RunProcessOptions {
  /** Kill the whole process group (SIGTERM, then SIGKILL after graceMs) when this passes. */
  timeoutMs: number;
  graceMs?: number;
  stdoutPath: string;
  stderrPath: string;
  signal?: AbortSignal;
  /** Run it in a PID namespace of its own (sources/isolation.ts), when the machine allows. */
  isolation?: Isolation;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  startedAt: string;
  endedAt: string;
  durationMs: number;
}

/**
 * Runs a harness CLI headless: stdin closed, stdout and stderr streamed to files (never held in memory),
 * in its own process group so that a timeout or an abort ends it and every process it started — a
 * harness that leaves background children must not outlive its sample.
 */
export async function runProcess(plan: ProcessPlan, options: RunProcessOptions): Promise<ProcessOutcome> {
  await mkdir(dirname(options.stdoutPath), { recursive: true });
  await mkdir(dirname(options.stderrPath), { recursive: true });
  const stdout = createWriteStream(options.stdoutPath);
  const stderr = createWriteStream(options.stderrPath);
  await Promise.all([once(stdout, 'open'), once(stderr, 'open')]);
  const started = Date.now();
  const input = plan.stdin === undefined ? undefined : await open(plan.stdin, 'r');
  const isolated = options.isolation?.pidNamespace === true;
  let child: ChildProcess;
  try {
    const { command, args } = isolated ? isolatedCommand(options.isolation!, plan.command, plan.args) : plan;
    // Isolated, descriptor 3 carries the namespace init's report of how the command itself ended.
    child = spawn(command, args, { cwd: plan.cwd, env: plan.env, stdio: [input?.fd ?? 'ignore', 'pipe', 'pipe', ...(isolated ? (['pipe'] as const) : [])], detached: true });
  } finally {
    await input?.close(); // the child has its own copy of the descriptor
  }
  const guard = child.pid === undefined ? undefined : startGuard(child.pid);
  let initReport = '';
  (child.stdio[3] as NodeJS.ReadableStream | undefined)?.on('data', (d: Buffer) => (initReport += d.toString('utf8')));
  // end: false — the files are ended below, after 'close', and only then awaited (pipe() would end them
  // first, and a wait for 'finish' after that never returns).
  child.stdout!.pipe(stdout, { end: false });
  child.stderr!.pipe(stderr, { end: false });
  let timedOut = false;
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const killGroup = () => {
    const pid = child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return; // already gone
    }
    killTimer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, options.graceMs ?? 5000);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  const onAbort = () => {
    aborted = true;
    killGroup();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const closed = once(child, 'close');
  closed.catch(() => {});
  let [exitCode, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  guard?.kill('SIGKILL'); // this process outlived the run: the guard has nothing left to do
  clearTimeout(timer);
  clearTimeout(killTimer);
  options.signal?.removeEventListener('abort', onAbort);
  // The leader is gone; make sure nothing it started lingers in its group.
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is empty: the normal case
  }
  // A process that left the group (setsid) may still hold the pipes: give them a bounded time, then let go.
  let capTimer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((r) => (capTimer = setTimeout(r, options.graceMs ?? 5000)))]);
  clearTimeout(capTimer);
  child.stdout!.unpipe(stdout);
  child.stderr!.unpipe(stderr);
  child.stdout!.destroy();
  child.stderr!.destroy();
  (child.stdio[3] as { destroy?: () => void } | undefined)?.destroy?.();
  // The command's own end, as the namespace's init saw it (a death by signal included); absent if the init was killed.
  const reported = isolated ? parseInitReport(initReport) : undefined;
  if (reported) [exitCode, signal] = [reported.code, reported.signal];
  stdout.end();
  stderr.end();
  await Promise.all([finished(stdout), finished(stderr)]);
  return { exitCode, signal, timedOut, aborted, startedAt: new Date(started).toISOString(), endedAt: new Date().toISOString(), durationMs: Date.now() - started };
}

/**
 * The harness runs in its own process group, so nothing roller's own end sends reaches it: if roller is
 * SIGKILLed the harness would go on alone. A small guard process reads a pipe from roller; when the pipe
 * closes without roller ending the guard first — roller died — it kills the harness's whole group.
 */
// Also polled: a guard reparented (roller gone) kills the group even if the pipe's end never arrives (seen once under load).
const GUARD = `const parent = process.ppid; const end = () => { try { process.kill(-Number(process.argv[1]), 'SIGKILL'); } catch {} process.exit(0); }; process.on('SIGINT', () => {}); process.on('SIGTERM', () => {}); process.stdin.resume(); process.stdin.on('end', end); process.stdin.on('error', end); setInterval(() => { if (process.ppid !== parent) end(); }, 500);`;

function startGuard(pgid: number): ChildProcess | undefined {
  try {
    const guard = spawn(process.execPath, ['-e', GUARD, String(pgid)], { stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: process.env.PATH ?? '' } });
    guard.on('error', () => {}); // no guard: the run goes on unguarded, as before
    guard.stdin!.on('error', () => {});
    guard.unref();
    (guard.stdin as unknown as { unref?: () => void }).unref?.();
    return guard;
  } catch {
    return undefined;
  }
}
