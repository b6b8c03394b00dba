import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAfter, removeDeadLeftovers } from '../core/dead-leftovers.js';
import type { Mount } from './docker-runner.js';

/** Where the relay's directory (its socket and script) and roller's node are in the container. */
const IN_CONTAINER = { dir: '/roller-relay', node: '/roller-relay-node' };

/**
 * Every container's command runs behind this script, on roller's own node mounted read-only (a glibc image is needed
 * for it). It holds a lifeline to roller (a Unix socket mounted from the host): when roller is gone (kill -9), the
 * kernel closes it and the harness is killed at once, so no container outlives the roller that started it.
 * With `--docker-network proxy` it is also the container's one way out: the container has no network, and the relay
 * listens on 127.0.0.1:PORT — the proxy's own address, so the harness's base URL is unchanged — carrying each
 * connection over another mounted socket to the recording proxy. Nothing else on the host or beyond is reachable.
 */
const RELAY = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [port, socket, lifeline, ...command] = process.argv.slice(2);
let child;
const life = net.connect(lifeline);
life.on('error', () => {});
life.on('close', () => { process.stderr.write('roller relay: roller is gone; the harness is stopped\\n'); if (child) child.kill('SIGKILL'); process.exit(137); });
function start() {
  child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (err) => { process.stderr.write('roller relay: ' + command[0] + ': ' + err.message + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] || 0)));
}
life.once('connect', () => {
  if (port === '-') return start();
  const server = net.createServer((inside) => {
    const out = net.connect(socket);
    inside.on('error', () => out.destroy());
    out.on('error', () => inside.destroy());
    inside.pipe(out).pipe(inside);
  });
  server.on('error', (err) => { process.stderr.write('roller relay: 127.0.0.1:' + port + ': ' + err.message + '\\n'); process.exit(125); });
  server.listen(Number(port), '127.0.0.1', start);
});
`;

export interface ProxyRelay {
  /** The command that runs `command` inside the container behind the relay. */
  wrap(command: string[]): string[];
  mounts: Mount[];
  close(): Promise<void>;
}

/**
 * A relay for one container: its lifeline to this process and, given the proxy's port on the host's 127.0.0.1, its
 * one way out to the proxy (else the container keeps its own network and the relay only holds the lifeline).
 */
export async function openProxyRelay(port: number | undefined): Promise<ProxyRelay> {
  // A short path: a Unix socket's is at most 107 bytes.
  // Named by this process: the relay directories of a roller killed since go with the next one's first container.
  await removeDeadLeftovers(tmpdir(), pidAfter('roller-relay-', '-.+'));
  const dir = await mkdtemp(join(tmpdir(), `roller-relay-${process.pid}-`));
  const socket = join(dir, 's');
  const lifeline = join(dir, 'l');
  const servers: Server[] = [];
  const held = new Set<Socket>();
  if (port !== undefined) {
    servers.push(createServer((fromContainer) => {
      const toProxy = createConnection({ host: '127.0.0.1', port });
      fromContainer.on('error', () => toProxy.destroy());
      toProxy.on('error', () => fromContainer.destroy());
      fromContainer.pipe(toProxy).pipe(fromContainer);
    }));
  }
  // Held open, never written: it closes when this process ends, however it ends.
  let closing = false;
  const life = createServer((peer) => {
    // One accepted while closing (the kernel took it before close): ended too, or the server's close would wait on it.
    if (closing) return void peer.destroy();
    held.add(peer);
    peer.on('error', () => undefined).on('close', () => held.delete(peer));
  });
  const listening = [...servers.map((server) => [server, socket] as const), [life, lifeline] as const];
  for (const [server, path] of listening) await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
  await writeFile(join(dir, 'relay.cjs'), RELAY);
  // The container's user (not roller's) connects to the sockets and reads the script.
  await chmod(dir, 0o755);
  for (const path of port !== undefined ? [socket, lifeline] : [lifeline]) await chmod(path, 0o666);
  await chmod(join(dir, 'relay.cjs'), 0o644);
  return {
    wrap: (command) => [IN_CONTAINER.node, `${IN_CONTAINER.dir}/relay.cjs`, port !== undefined ? String(port) : '-', `${IN_CONTAINER.dir}/s`, `${IN_CONTAINER.dir}/l`, ...command],
    mounts: [
      { path: dir, target: IN_CONTAINER.dir, readOnly: true },
      { path: process.execPath, target: IN_CONTAINER.node, readOnly: true },
    ],
    async close() {
      closing = true;
      for (const peer of held) peer.destroy();
      for (const [server] of listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
