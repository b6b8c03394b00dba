/** The bench's server processes (servers.ts), started and measured from the client process. */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const serversScript = fileURLToPath(new URL('./servers.js', import.meta.url));
export const children: ChildProcess[] = [];

export interface Server {
  name: string;
  url: string;
  child?: ChildProcess;
}

export async function start(name: string, args: string[]): Promise<Server> {
  const child = fork(serversScript, [name, ...args], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  children.push(child);
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { name, url, child };
}

export async function ask<T>(child: ChildProcess, message: string): Promise<T> {
  child.send(message);
  return ((await once(child, 'message')) as [T])[0];
}

type Figures = { peakRssMb: number; cpuMs: number };
type Stats = Figures & { rssMb: number; children: Figures[]; loopMaxMs: number };
interface Measured<R> {
  result: R;
  cpuMs: number | null;
  peakRssMb: number | null;
  /** roller's projection process (a child of the proxy's): its CPU and peak RSS over the same work, if it has one. */
  projection: Figures | null;
  /** The longest the server's event loop was blocked over the work, ms (since 'reset-peak'). */
  loopMaxMs: number | null;
}

/** Runs `work` with the proxy's peak RSS reset before it, and reports its CPU and peak RSS over it. */
export async function measured<R>(server: Server, work: () => Promise<R>): Promise<Measured<R>> {
  if (!server.child) return { result: await work(), cpuMs: null, peakRssMb: null, projection: null, loopMaxMs: null };
  await ask(server.child, 'reset-peak');
  const before = await ask<Stats>(server.child, 'stats');
  const result = await work();
  const after = await ask<Stats>(server.child, 'stats');
  const [child0, child1] = [before.children[0], after.children[0]];
  const projection = child0 && child1 ? { cpuMs: child1.cpuMs - child0.cpuMs, peakRssMb: child1.peakRssMb } : null;
  return { result, cpuMs: after.cpuMs - before.cpuMs, peakRssMb: after.peakRssMb, projection, loopMaxMs: after.loopMaxMs };
}

