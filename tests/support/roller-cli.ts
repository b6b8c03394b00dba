import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rollerBin } from './paths.js';

/** bin/roller (over dist/) run with these arguments, stdin closed: its exit code and everything it printed. */
export async function roller(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
