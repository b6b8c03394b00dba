/**
 * The relay every container's command runs behind, run here on this node with real sockets and processes: the
 * command runs while roller's end of the lifeline is open, and is killed the moment it closes (roller gone).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProxyRelay } from '../../src/sources/docker-relay.js';

describe('docker relay lifeline', () => {
  it("runs the command, passes its exit code, and kills it when roller's end closes", async () => {
    const relay = await openProxyRelay(undefined);
    const dir = relay.mounts[0]!.path;
    const run = (command: string[]) => spawn(process.execPath, [join(dir, 'relay.cjs'), '-', join(dir, 's'), join(dir, 'l'), ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
    const quick = run(['sh', '-c', 'exit 3']);
    expect((await once(quick, 'exit'))[0]).toBe(3);

    const long = run(['sleep', '60']);
    let stderr = '';
    long.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    await new Promise((r) => setTimeout(r, 500)); // connected, and sleeping
    expect(long.exitCode).toBeNull();
    await relay.close(); // what the kernel does when roller is killed: its end of the lifeline closes
    const [code] = await once(long, 'exit');
    expect(code).toBe(137);
    expect(stderr).toContain('roller relay: roller is gone; the harness is stopped');
  });
});
