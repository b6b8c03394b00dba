import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mount } from './docker-runner.js';

/** Where the relay's directory (its socket and script) and roller's node are in the container. */
const IN_CONTAINER = { dir: '/roller-relay', node: '/roller-relay-node' };

/**
 * The container's one way out (`--docker-network proxy`): the container has no network, and a relay inside it
 * listens on 127.0.0.1:PORT — the proxy's own address, so the harness's base URL is unchanged — and carries each
 * connection over a Unix socket mounted from the host to the recording proxy. Nothing else on the host or beyond
 * is reachable. The relay runs on roller's own node, mounted read-only (a glibc image is needed for it).
 */
const RELAY = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [port, socket, ...command] = process.argv.slice(2);
const server = net.createServer((inside) => {
  const out = net.connect(socket);
  inside.on('error', () => out.destroy());
  out.on('error', () => inside.destroy());
  inside.pipe(out).pipe(inside);
});
server.on('error', (err) => { process.stderr.write('roller relay: 127.0.0.1:' + port + ': ' + err.message + '\\n'); process.exit(125); });
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (err) => { process.stderr.write('roller relay: ' + command[0] + ': ' + err.message + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] || 0)));
});
`;

export interface ProxyRelay {
  /** The command that runs `command` inside the container behind the relay. */
  wrap(command: string[]): string[];
  mounts: Mount[];
  close(): Promise<void>;
}

/** A relay to the proxy on the host's 127.0.0.1:port, for one container. */
export async function openProxyRelay(port: number): Promise<ProxyRelay> {
  // A short path: a Unix socket's is at most 107 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'roller-relay-'));
  const socket = join(dir, 's');
  const server: Server = createServer((fromContainer) => {
    const toProxy = createConnection({ host: '127.0.0.1', port });
    fromContainer.on('error', () => toProxy.destroy());
    toProxy.on('error', () => fromContainer.destroy());
    fromContainer.pipe(toProxy).pipe(fromContainer);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  await writeFile(join(dir, 'relay.cjs'), RELAY);
  // The container's user (not roller's) connects to the socket and reads the script.
  await chmod(dir, 0o755);
  await chmod(socket, 0o666);
  await chmod(join(dir, 'relay.cjs'), 0o644);
  return {
    wrap: (command) => [IN_CONTAINER.node, `${IN_CONTAINER.dir}/relay.cjs`, String(port), `${IN_CONTAINER.dir}/s`, ...command],
    mounts: [
      { path: dir, target: IN_CONTAINER.dir, readOnly: true },
      { path: process.execPath, target: IN_CONTAINER.node, readOnly: true },
    ],
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
