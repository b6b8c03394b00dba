import { spawnSync } from 'node:child_process';

/**
 * Process isolation for the local runner: each harness (and grader) runs as the init of its own PID namespace with
 * its own /proc (util-linux `unshare`). Its tools see only their own process tree — not roller's environment or
 * command line, not the user's other processes — and the whole tree, a `setsid` daemon included, ends when the
 * harness does. Without privileges a user namespace maps the caller's own uid (no capability outside it). As root, the
 * PID and mount namespaces are made first and a user namespace (root mapped to root) entered inside them: the
 * agent's mounts are then locked, so `umount /proc` fails and the host's /proc (roller's environment) stays covered.
 */
export interface Isolation {
  /** The harness runs in a PID namespace of its own. */
  pidNamespace: boolean;
  /** Why not, when it does not (said at the start of a run and kept in each sample's warnings). */
  reason?: string;
  /** The command that starts a process inside one (`unshare …`), when it does. */
  wrapper?: readonly string[];
}

let detected: Isolation | undefined;

/** What this machine allows, probed once per process: a real namespace is entered and its /proc looked at. */
export function detectIsolation(): Isolation {
  detected ??= probe();
  return detected;
}

function probe(): Isolation {
  if (process.platform !== 'linux') return { pidNamespace: false, reason: `PID namespaces are Linux's; this is ${process.platform}` };
  const asUser = process.getuid?.() !== 0;
  const wrapper = asUser
    ? ['unshare', '--user', '--map-current-user', '--pid', '--fork', '--mount', '--mount-proc', '--kill-child']
    : ['unshare', '--pid', '--fork', '--mount', '--mount-proc', '--kill-child', '--', 'unshare', '--user', '--map-root-user', '--mount'];
  // Inside, the shell is PID 1, /proc lists only its own tree, and it cannot unmount /proc to uncover the host's.
  const script = 'echo $$; ls /proc | grep -c "^[0-9]"; if umount /proc 2>/dev/null || umount -l /proc 2>/dev/null; then echo unlocked; else echo locked; fi';
  const r = spawnSync(wrapper[0]!, [...wrapper.slice(1), '--', '/bin/sh', '-c', script], { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  if (r.error) return { pidNamespace: false, reason: `unshare could not start (${r.error.message}); install util-linux` };
  const [pid, count, lock] = r.stdout.trim().split('\n');
  if (r.status === 0 && pid === '1' && lock === 'unlocked') {
    return { pidNamespace: false, reason: "the agent could unmount its /proc and read roller's processes (the namespace's mounts are not locked)" };
  }
  if (r.status !== 0 || pid !== '1' || Number(count) > 4) {
    const why = (r.stderr || r.stdout).trim().split('\n').pop() ?? `exit ${r.status}`;
    return { pidNamespace: false, reason: `this machine refuses a PID namespace to ${asUser ? 'this user' : 'roller'} (${why})` };
  }
  return { pidNamespace: true, wrapper };
}

/**
 * The namespace's init: a small Node process that starts the command (stdio inherited), waits for it, and writes how it
 * ended — `{"code":…,"signal":…}` — on descriptor 3 before it exits. The harness itself must not be PID 1: the kernel
 * drops signals to a namespace's init that has no handler, so neither roller's SIGTERM nor its own tools' kill would
 * reach it; and an init's exit status cannot tell a death by signal from an exit code, hence the report.
 */
const INIT = [
  "const { spawn } = require('node:child_process');",
  "const { writeSync } = require('node:fs');",
  "const [command, ...args] = process.argv.slice(1);",
  "const child = spawn(command, args, { stdio: 'inherit' });",
  "const report = (s) => { try { writeSync(3, JSON.stringify(s)); } catch {} };",
  "child.on('error', (err) => { report({ code: 127, signal: null, error: err.message }); process.exit(127); });",
  "child.on('exit', (code, signal) => { report({ code, signal }); process.exit(code ?? 128); });",
].join(' ');

/** A command run inside the namespace (see INIT); its report comes on descriptor 3 of the process started. */
export function isolatedCommand(isolation: Isolation, command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!isolation.pidNamespace || !isolation.wrapper) return { command, args: [...args] };
  const [head, ...rest] = isolation.wrapper;
  return { command: head!, args: [...rest, '--', process.execPath, '-e', INIT, '--', command, ...args] };
}

/** The init's report (descriptor 3), if it wrote one: how the command itself ended. */
export function parseInitReport(text: string): { code: number | null; signal: NodeJS.Signals | null; error?: string } | undefined {
  try {
    const r = JSON.parse(text) as { code?: unknown; signal?: unknown; error?: unknown };
    const code = typeof r.code === 'number' ? r.code : null;
    const signal = typeof r.signal === 'string' ? (r.signal as NodeJS.Signals) : null;
    return { code, signal, ...(typeof r.error === 'string' ? { error: r.error } : {}) };
  } catch {
    return undefined;
  }
}

/** The warning a run prints, and each sample keeps, when the harness is not isolated. */
export function isolationWarning(isolation: Isolation): string | undefined {
  if (isolation.pidNamespace) return undefined;
  return `process isolation unavailable: ${isolation.reason}. The agent's tools can see roller's process (its environment, where a model key may be) and may outlive the sample; run untrusted tasks with --runner docker`;
}
