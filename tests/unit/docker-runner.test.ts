import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS, runInDocker, type ContainerSpec, type DockerApi, type DockerContainer } from '../../src/sources/docker-runner.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('docker-runner');

/** Docker's multiplexed attach framing: [stream, 0, 0, 0, size (BE32)] + payload. */
function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/**
 * An engine stand-in with dockerode's API shape; demultiplexing is dockerode's own (its modem needs no
 * engine). `behaviour` decides what the "process" in the container does once started.
 */
function fakeEngine(behaviour: { output?: [1 | 2, string][]; exitCode?: number; hang?: boolean; failCreate?: string }) {
  const log: string[] = [];
  let created: Dockerode.ContainerCreateOptions | undefined;
  const modem = new Docker({ socketPath: '/nonexistent.sock' }).modem;
  const api: DockerApi = {
    ping: async () => 'OK',
    getImage: () => ({ inspect: async () => ({ Id: 'sha256:feed' }) }),
    listContainers: async () => [],
    buildImage: async () => { throw new Error('no builds here'); },
    getContainer: () => ({ remove: async () => undefined }),
    modem,
    async createContainer(options) {
      if (behaviour.failCreate) throw new Error(behaviour.failCreate);
      created = options;
      log.push('create');
      const stream = new PassThrough();
      let exit: (code: number) => void = () => undefined;
      const exited = new Promise<number>((resolve) => (exit = resolve));
      const container: DockerContainer = {
        id: 'c0ffee',
        attach: async () => {
          log.push('attach');
          return stream;
        },
        start: async () => {
          log.push('start');
          if (behaviour.hang) return;
          for (const [s, text] of behaviour.output ?? []) stream.write(frame(s, text));
          stream.end();
          exit(behaviour.exitCode ?? 0);
        },
        wait: async () => ({ StatusCode: await exited }),
        kill: async () => {
          log.push('kill');
          stream.end();
          exit(137);
        },
        remove: async (o) => void log.push(`remove${o?.force ? ' force' : ''}`),
      };
      return container;
    },
  };
  return { api, log, created: () => created };
}

const me = { uid: process.getuid!(), gid: process.getgid!() };
const spec = (image: string, network: ContainerSpec['network'] = 'host'): ContainerSpec => ({ image, user: me, limits: DEFAULT_LIMITS, network, readOnlyRoot: false, labels: { 'dev.roller.run': '/runs/r' } });
const plan = { command: '/cache/claude-code-2.1.332/node_modules/.bin/claude', args: ['-p', 'hello'], cwd: '/tmp/w', env: { HOME: '/tmp/h', PATH: '/usr/bin' } };

describe('docker runner (dockerode API, engine stand-in)', () => {
  it('runs the plan as the local runner would: same command, env, cwd, mounts at the same paths, host network; stdout and stderr apart; container removed', async () => {
    const engine = fakeEngine({ output: [[1, '{"type":"result"}\n'], [2, 'a warning\n'], [1, 'more\n']], exitCode: 0 });
    const outcome = await runInDocker(plan, {
      container: spec('node:20-bookworm'), docker: engine.api, timeoutMs: 5000,
      mounts: [{ path: '/tmp/h' }, { path: '/tmp/w' }, { path: '/cache/claude-code-2.1.332', readOnly: true }],
      stdoutPath: join(tmp.path, 'a', 'stdout.log'), stderrPath: join(tmp.path, 'a', 'stderr.log'),
    });
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    expect(await readFile(join(tmp.path, 'a', 'stdout.log'), 'utf8')).toBe('{"type":"result"}\nmore\n');
    expect(await readFile(join(tmp.path, 'a', 'stderr.log'), 'utf8')).toBe('a warning\n');
    expect(engine.created()).toMatchObject({
      Image: 'node:20-bookworm',
      // Behind the relay, which holds its lifeline to roller (the container dies with roller).
      Cmd: ['/roller-relay-node', '/roller-relay/relay.cjs', '-', '/roller-relay/s', '/roller-relay/l', plan.command, '-p', 'hello'],
      Env: ['HOME=/tmp/h', 'PATH=/usr/bin'],
      WorkingDir: '/tmp/w',
      User: `${me.uid}:${me.gid}`,
      Labels: { 'dev.roller.run': '/runs/r', 'dev.roller.sample': '1' },
      HostConfig: { Binds: ['/tmp/h:/tmp/h', '/tmp/w:/tmp/w', '/cache/claude-code-2.1.332:/cache/claude-code-2.1.332:ro', expect.stringMatching(/^\/tmp\/roller-relay-\d+-\w+:\/roller-relay:ro$/), `${process.execPath}:/roller-relay-node:ro`], NetworkMode: 'host', Init: true, PidsLimit: 4096, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'] },
    });
    expect(engine.log).toEqual(['create', 'attach', 'start', 'remove force']);
  });

  it("a prompt on stdin comes from its file by the image's shell (no stream to attach): the command reads it whole", async () => {
    const prompt = join(tmp.path, 'prompt.txt');
    await writeFile(prompt, 'a prompt with "quotes", $dollars and\nlines');
    const engine = fakeEngine({ output: [], exitCode: 0 });
    await runInDocker({ command: 'cat', args: [], cwd: tmp.path, env: { PATH: '/usr/bin:/bin' }, stdin: prompt }, { container: spec('img'), docker: engine.api, timeoutMs: 5000, mounts: [], stdoutPath: join(tmp.path, 's', 'o'), stderrPath: join(tmp.path, 's', 'e') });
    const created = engine.created()!;
    const command = created.Cmd!.slice(5); // after the relay
    expect(command).toEqual(['/bin/sh', '-c', 'exec "$0" "$@" < "$ROLLER_STDIN"', 'cat']);
    expect(created.Env).toContain(`ROLLER_STDIN=${prompt}`);
    // The same command line, run by a real shell: the program gets the file on its stdin, byte for byte.
    const env = Object.fromEntries(created.Env!.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    const { spawnSync } = await import('node:child_process');
    expect(spawnSync(command[0]!, command.slice(1), { env }).stdout.toString()).toBe('a prompt with "quotes", $dollars and\nlines');
  });

  it('a container that runs past the timeout is killed and removed, and the outcome says timeout', async () => {
    const engine = fakeEngine({ hang: true });
    const outcome = await runInDocker(plan, { container: spec('img', 'none'), docker: engine.api, timeoutMs: 100, mounts: [], stdoutPath: join(tmp.path, 'b', 'o'), stderrPath: join(tmp.path, 'b', 'e') });
    expect(outcome).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(engine.log).toEqual(['create', 'attach', 'start', 'kill', 'remove force']);
    expect(engine.created()!.HostConfig!.NetworkMode).toBe('none');
  });

  it('a non-zero exit is the exit code, the container still removed', async () => {
    const engine = fakeEngine({ output: [[2, 'boom\n']], exitCode: 3 });
    const outcome = await runInDocker(plan, { container: spec('img'), docker: engine.api, timeoutMs: 5000, mounts: [], stdoutPath: join(tmp.path, 'c', 'o'), stderrPath: join(tmp.path, 'c', 'e') });
    expect(outcome.exitCode).toBe(3);
    expect(engine.log.at(-1)).toBe('remove force');
  });

  it('an image the engine cannot create a container from is a clear error naming the image', async () => {
    const engine = fakeEngine({ failCreate: 'No such image: nope:1' });
    const err = await runInDocker(plan, { container: spec('nope:1'), docker: engine.api, timeoutMs: 1000, mounts: [], stdoutPath: join(tmp.path, 'd', 'o'), stderrPath: join(tmp.path, 'd', 'e') }).catch((e: unknown) => e);
    expect(isRollerError(err)).toBe(true);
    expect((err as Error).message).toContain('image nope:1');
    expect((err as Error).message).toContain('No such image');
  });
});
