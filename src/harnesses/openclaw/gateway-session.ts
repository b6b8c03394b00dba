/**
 * One OpenClaw task through a Gateway, as one process (so the process runner's timeout and kill reach every
 * part of it): start `openclaw gateway run`, wait until it says it is ready, run the task with `openclaw agent
 * --json`, wait until every sub-agent it spawned has ended and its completion has been delivered back to the
 * requester (`openclaw tasks list --json --runtime subagent`), then stop the Gateway.
 *
 * Why a Gateway: `sessions_spawn` children only run inside one (embedded exec answers "published reply
 * runtime missing"), and a child's completion reaches the parent as a later run of the parent session
 * (`announce:v1:…`) after `openclaw agent` has returned — stopping at the agent's exit would cut it off.
 *
 * Runs on OpenClaw's own Node runtime, outside roller's process: Node built-ins only, and TypeScript that
 * Node can run by stripping types (no enums, no parameter properties, no relative imports).
 *
 *   node roller-gateway-session.mjs <spec.json>     (collect copies it into the attempt's HOME)
 *
 * stdout: the agent's `--json` result, as it printed it. stderr: the Gateway's log, the agent's stderr and
 * roller's own lines (prefixed "roller gateway-session:"). Exit code: the agent's, or 70 when the Gateway
 * did not come up, 71 when sub-agents did not settle in time. After a successful agent run the drain's
 * outcome is written to `reportPath` (DrainReport): a failed drain is a capture error, not the turn's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

export interface GatewaySessionSpec {
  /** openclaw.mjs */
  bin: string;
  port: number;
  /** `openclaw agent` arguments after `agent` (the message, --json, --timeout, …). */
  agentArgs: string[];
  /** How long the Gateway gets to say "ready". */
  readyTimeoutMs: number;
  /** How long sub-agents get, after the agent returned, to end and have their completions delivered. */
  settleTimeoutMs: number;
  /** Between the two looks at the task list that confirm it settled. */
  pollMs: number;
  /**
   * The longest wait between looks while sub-agents run: a look is taken as soon as the Gateway logs that
   * a run ended, so this is only the fallback when its log says nothing (a look costs ~2 s of CPU).
   */
  idlePollMs?: number;
  /**
   * The launcher's whole time: the wait for sub-agents ends by then, leaving the Gateway time to stop and the
   * report to be written before the sample's own timeout kills the process group.
   */
  budgetMs?: number;
  /** Where the drain's outcome is written (DrainReport), once the agent run succeeded. */
  reportPath?: string;
}

/** How the wait for sub-agents ended: settled, or what the registry last said (unreadable: it never answered). */
export interface DrainReport {
  settled: boolean;
  registry: 'read' | 'unreadable';
  /** The sub-agent tasks the registry last listed that had not settled. */
  pending: { childSessionKey: string | null; status: string | null; deliveryStatus: string | null }[];
  message: string | null;
}

/** Sub-agent task states after which nothing more happens (openclaw 2026.9.6 `tasks --status`). */
const ENDED = new Set(['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'blocked']);
/** Delivery states that still lead to a run of the requester (the rest are final). */
const DELIVERING = new Set(['pending', 'queued', 'session_queued']);

interface SubagentTask {
  runId?: string;
  childSessionKey?: string;
  status?: string;
  deliveryStatus?: string;
}

const say = (line: string): void => {
  process.stderr.write(`roller gateway-session: ${line}\n`);
};

// eslint-disable-next-line no-control-regex
const stripAnsi = (s: string): string => s.replace(/\u001b\[[0-9;]*m/g, '');

/**
 * Follows the Gateway's log (passing it on to stderr): `ready` settles when it says it is ready (or fails
 * when it exits first or stays silent past `readyTimeoutMs`), and `nextRunEnd` waits for an agent run it
 * logs as ended (a sub-agent's, or a delivery run of its parent).
 */
function followGateway(gateway: ChildProcess, readyTimeoutMs: number): { ready: Promise<void>; runsEnded: () => number; nextRunEnd: (ms: number, seen: number) => Promise<void> } {
  let runsEnded = 0;
  let onRunEnded: (() => void) | null = null;
  let pending = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Gateway did not report ready within ${readyTimeoutMs / 1000} s`)), readyTimeoutMs);
    gateway.stdout?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n').map(stripAnsi);
      pending = lines.pop() ?? '';
      if (lines.some((l) => /\[gateway\] ready\b/.test(l))) {
        clearTimeout(timer);
        resolve();
      }
      const ends = lines.filter((l) => /\[agent\] run \S+ ended\b/.test(l)).length;
      if (ends > 0) {
        runsEnded += ends;
        onRunEnded?.();
      }
    });
    gateway.stderr?.on('data', (c: Buffer) => process.stderr.write(c));
    gateway.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the Gateway exited (${code ?? signal}) before it was ready`));
    });
  });
  return {
    ready,
    runsEnded: () => runsEnded,
    // Until more runs ended than `seen`, or `ms` passed.
    nextRunEnd: (ms, seen) =>
      new Promise((resolve) => {
        if (runsEnded !== seen) return resolve();
        const done = (): void => {
          clearTimeout(timer);
          onRunEnded = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        onRunEnded = done;
      }),
  };
}

function run(command: string, args: string[], stdout: 'inherit' | 'capture'): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', stdout === 'inherit' ? 'inherit' : 'pipe', 'inherit'] });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', (err) => {
      say(`${args.slice(0, 2).join(' ')} could not start: ${err.message}`);
      resolve({ code: 127, out });
    });
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), out }));
  });
}

/** The sub-agent tasks, or null when the list could not be read (said on stderr). */
async function subagentTasks(bin: string): Promise<SubagentTask[] | null> {
  const { code, out } = await run(process.execPath, [bin, 'tasks', 'list', '--json', '--runtime', 'subagent'], 'capture');
  if (code !== 0) {
    say(`openclaw tasks list exited ${code}`);
    return null;
  }
  try {
    const parsed = JSON.parse(out.slice(out.indexOf('{'))) as { tasks?: SubagentTask[] };
    return Array.isArray(parsed.tasks) ? parsed.tasks : null;
  } catch {
    say(`openclaw tasks list printed no JSON: ${out.slice(0, 200)}`);
    return null;
  }
}

const settledTask = (t: SubagentTask): boolean => ENDED.has(String(t.status)) && !DELIVERING.has(String(t.deliveryStatus));

/**
 * Until every sub-agent task has ended and its completion is no longer on its way, seen twice in a row (a
 * delivery run may spawn another child between two looks). null when settled in time, else what still runs.
 */
async function waitForSubagents(spec: GatewaySessionSpec, log: ReturnType<typeof followGateway>, started: number): Promise<DrainReport> {
  const budgetEnd = spec.budgetMs !== undefined ? started + spec.budgetMs : Infinity;
  const deadline = Math.min(Date.now() + spec.settleTimeoutMs, budgetEnd);
  const after = deadline === budgetEnd ? `${Math.round(spec.budgetMs! / 1000)} s into the run` : `${spec.settleTimeoutMs / 1000} s`;
  let calm = 0;
  let last: SubagentTask[] | null = null;
  while (Date.now() < deadline) {
    const seen = log.runsEnded(); // a run that ends while the list is being read is not missed
    const tasks = await subagentTasks(spec.bin);
    if (tasks) last = tasks;
    calm = tasks !== null && tasks.every(settledTask) ? calm + 1 : 0;
    if (calm === 2) {
      say(`${tasks!.length} sub-agent task(s) settled: ${tasks!.map((t) => `${t.childSessionKey} ${t.status}/${t.deliveryStatus}`).join('; ') || 'none'}`);
      return { settled: true, registry: 'read', pending: [], message: null };
    }
    // Settled once: confirm after a short pause (or at the next run's end). Not yet: look again when a run ends.
    await log.nextRunEnd(Math.min(calm === 1 ? spec.pollMs : spec.idlePollMs ?? 10_000, Math.max(0, deadline - Date.now())), seen);
  }
  // A loaded machine may spend the whole wait starting the first look: one more, so a slow registry is still read.
  last ??= await subagentTasks(spec.bin);
  if (last === null) return { settled: false, registry: 'unreadable', pending: [], message: `the sub-agent task list could not be read within ${after}` };
  const pending = last.filter((t) => !settledTask(t));
  return {
    settled: false,
    registry: 'read',
    pending: pending.map((t) => ({ childSessionKey: t.childSessionKey ?? null, status: t.status ?? null, deliveryStatus: t.deliveryStatus ?? null })),
    message: `sub-agents still running after ${after}: ${pending.map((t) => `${t.childSessionKey} ${t.status}/${t.deliveryStatus}`).join('; ')}`,
  };
}

function stop(gateway: ChildProcess): Promise<void> {
  if (gateway.exitCode !== null || gateway.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // The Gateway drains on SIGTERM; with nothing in flight that is quick. A hung one is killed.
    const timer = setTimeout(() => gateway.kill('SIGKILL'), 15_000);
    gateway.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    gateway.kill('SIGTERM');
  });
}

async function main(): Promise<number> {
  const started = Date.now();
  const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as GatewaySessionSpec;
  const gateway = spawn(process.execPath, [spec.bin, 'gateway', 'run', '--port', String(spec.port), '--auth', 'token'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Roller's verdict is said after the Gateway stopped: the last lines of stderr are what a failed sample shows.
  let verdict: string | null = null;
  let code: number;
  try {
    const log = followGateway(gateway, spec.readyTimeoutMs);
    await log.ready;
    const agent = await run(process.execPath, [spec.bin, 'agent', ...spec.agentArgs], 'inherit');
    const drain = agent.code === 0 ? await waitForSubagents(spec, log, started) : null;
    if (drain && spec.reportPath) writeFileSync(spec.reportPath, JSON.stringify(drain));
    verdict = drain?.message ?? null;
    code = agent.code !== 0 ? agent.code : drain?.settled ? 0 : 71;
  } catch (err) {
    verdict = (err as Error).message;
    code = 70;
  } finally {
    await stop(gateway);
  }
  if (verdict) say(verdict);
  return code;
}

if (process.argv[1] && /gateway-session\.(js|ts|mjs|mts)$/.test(process.argv[1])) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      say(`failed: ${(err as Error).stack ?? String(err)}`);
      process.exit(1);
    },
  );
}
