import { availableParallelism } from 'node:os';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import type Dockerode from 'dockerode';
import { ErrorCode, RollerError } from '../core/errors.js';
import { processAlive } from '../core/dead-leftovers.js';
import { openProxyRelay, type ProxyRelay } from './docker-relay.js';
import { chownTree } from './ownership.js';
import type { ProcessOutcome, ProcessPlan, RunProcessOptions } from './process-runner.js';

/** The part of dockerode the runner uses (a real Dockerode instance, or a stand-in in unit tests). */
export interface DockerApi {
  ping(): Promise<unknown>;
  getImage(name: string): { inspect(): Promise<{ Id: string; Config?: { User?: string; WorkingDir?: string } }> };
  buildImage(context: { context: string; src: string[] }, options: Record<string, unknown>): Promise<NodeJS.ReadableStream>;
  createContainer(options: Dockerode.ContainerCreateOptions): Promise<DockerContainer>;
  listContainers(options: { all?: boolean; filters?: string }): Promise<{ Id: string; Labels: Record<string, string> }[]>;
  getContainer(id: string): Pick<DockerContainer, 'remove'>;
  modem: {
    followProgress(stream: NodeJS.ReadableStream, onFinished: (err: Error | null, output: { error?: string; errorDetail?: { message?: string } }[]) => void): void;
    demuxStream(stream: NodeJS.ReadableStream, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): void };
}

export interface DockerContainer {
  id: string;
  attach(options: Dockerode.ContainerAttachOptions): Promise<NodeJS.ReadWriteStream>;
  start(): Promise<unknown>;
  wait(): Promise<{ StatusCode: number }>;
  kill(options?: { signal?: string }): Promise<unknown>;
  remove(options?: { force?: boolean; v?: boolean }): Promise<unknown>;
}

/** The container a sample (or its grader) runs in: what the run lock records of it. */
export interface ContainerSpec {
  image: string;
  /** The user inside; never root. Directories it writes are handed to it for the run and taken back after. */
  user: { uid: number; gid: number };
  limits: ContainerLimits;
  /**
   * host: the host's network namespace (the proxy on the host's loopback; so is every other loopback service).
   * proxy: no network but a relay to its recording proxy (docker-relay.ts): nothing else is reachable.
   * none: no network at all (graders and verifiers).
   */
  network: 'host' | 'proxy' | 'none';
  /** The image's filesystem read-only (HOME, the work dir and a /tmp of its own writable); a Harbor task's image is not. */
  readOnlyRoot: boolean;
  labels: Record<string, string>;
}

export interface ContainerLimits {
  /** Bytes of memory (and swap: the same, so none); null: the engine's default (no limit). */
  memoryBytes: number | null;
  /** CPUs in billionths (1.5 CPUs = 1.5e9); null: no limit. */
  nanoCpus: number | null;
  /** Processes and threads at most: a fork bomb ends at this. */
  pids: number;
}

export const DEFAULT_LIMITS: ContainerLimits = { memoryBytes: null, nanoCpus: null, pids: 4096 };

/** Where no flag (nor a Harbor task's [environment]) says: a harness and its tools fit; a runaway does not take the host. */
export const DEFAULT_MEMORY_BYTES = 8 * 1024 ** 3;
export const defaultNanoCpus = (): number => Math.min(2, availableParallelism()) * 1e9;

/** The size of a read-only container's /tmp (memory-backed; counted in its memory limit). */
const TMP_SIZE = '1g';

/** The label every container roller makes carries; the run and the process that made it are labels too. */
export const SAMPLE_LABEL = 'dev.roller.sample';

export interface DockerRunOptions extends RunProcessOptions {
  container: ContainerSpec;
  /** Host paths mounted at the same path in the container (HOME, the work dir, the pinned CLI), or at `target`. */
  mounts: Mount[];
  /** Variables added to the plan's (a Harbor task's [environment.env]); the plan's own win. */
  env?: Record<string, string>;
  /** network 'proxy': the port of the recording proxy on the host's 127.0.0.1 (the relay listens on it inside). */
  proxyPort?: number;
  docker: DockerApi;
}

export interface Mount {
  path: string;
  /** Where in the container (default: the same path). */
  target?: string;
  readOnly?: boolean;
}

/** Docker engine API version pinned: what the runner was written against (Engine ≥ 20.10). */
export const DOCKER_API_VERSION = 'v1.41';

/**
 * Runs a harness plan in a container: the same command, arguments, environment and working directory as
 * the local runner, the plan's directories mounted at the same paths, stdout and stderr demultiplexed into
 * the same files. A timeout or an abort kills the container (every process in it); it is removed whatever
 * happened, so no sample leaves one behind.
 */
export async function runInDocker(plan: ProcessPlan, options: DockerRunOptions): Promise<ProcessOutcome> {
  await mkdir(dirname(options.stdoutPath), { recursive: true });
  await mkdir(dirname(options.stderrPath), { recursive: true });
  const { container: spec } = options;
  const writable = [...new Set(options.mounts.filter((m) => !m.readOnly).map((m) => m.path))];
  const handOver = spec.user.uid !== process.getuid?.();
  if (handOver) for (const path of writable) await chownTree(path, spec.user.uid, spec.user.gid);
  const stdout = createWriteStream(options.stdoutPath);
  const stderr = createWriteStream(options.stderrPath);
  const started = Date.now();
  let container: DockerContainer | undefined;
  let timedOut = false;
  let aborted = false;
  let exitCode: number | null = null;
  let relay: ProxyRelay | undefined;
  try {
    if (spec.network === 'proxy' && !options.proxyPort) throw new RollerError(ErrorCode.INVALID_OPTIONS, "docker: the 'proxy' network needs the recording proxy's port");
    relay = await openProxyRelay(spec.network === 'proxy' ? options.proxyPort : undefined);
    container = await create(plan, options, relay);
    running.set(container.id, container);
    const kill = () => void container!.kill().catch(() => undefined); // already stopped: nothing to do
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      options.docker.modem.demuxStream(stream, stdout, stderr);
      const ended = new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', () => resolve());
      });
      if (options.signal?.aborted) onAbort();
      else await container.start();
      exitCode = (await container.wait()).StatusCode;
      await ended;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  } finally {
    await container?.remove({ force: true, v: true }).catch(() => undefined);
    if (container) running.delete(container.id);
    await relay?.close();
    stdout.end();
    stderr.end();
    await Promise.all([finished(stdout), finished(stderr)]);
    // Back to roller's user before anything of it is read: links stay links (lchown), nothing is followed.
    if (handOver) for (const path of writable) await chownTree(path, process.getuid!(), process.getgid!());
  }
  const ended = Date.now();
  return {
    exitCode: timedOut || aborted ? null : exitCode,
    signal: timedOut || aborted ? 'SIGKILL' : null,
    timedOut,
    aborted,
    startedAt: new Date(started).toISOString(),
    endedAt: new Date(ended).toISOString(),
    durationMs: ended - started,
  };
}

async function create(plan: ProcessPlan, options: DockerRunOptions, relay: ProxyRelay | undefined): Promise<DockerContainer> {
  const { container: spec } = options;
  // A prompt on stdin comes from its file (in a mounted directory) by the image's shell: no stream to attach.
  const command = plan.stdin === undefined ? [plan.command, ...plan.args] : ['/bin/sh', '-c', 'exec "$0" "$@" < "$ROLLER_STDIN"', plan.command, ...plan.args];
  const mounts = [...options.mounts, ...(relay?.mounts ?? [])];
  try {
    return await options.docker.createContainer({
      Image: spec.image,
      Cmd: relay ? relay.wrap(command) : command,
      Env: Object.entries({ ...options.env, ...plan.env, ...(plan.stdin === undefined ? {} : { ROLLER_STDIN: plan.stdin }) }).map(([k, v]) => `${k}=${v}`),
      WorkingDir: plan.cwd,
      User: `${spec.user.uid}:${spec.user.gid}`,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      OpenStdin: false,
      Labels: { ...spec.labels, [SAMPLE_LABEL]: '1' },
      HostConfig: {
        Binds: mounts.map((m) => `${m.path}:${m.target ?? m.path}${m.readOnly ? ':ro' : ''}`),
        NetworkMode: spec.network === 'proxy' ? 'none' : spec.network,
        AutoRemove: false,
        Init: true, // a harness's background children are reaped and signalled with it
        PidsLimit: spec.limits.pids,
        ...(spec.limits.memoryBytes !== null ? { Memory: spec.limits.memoryBytes, MemorySwap: spec.limits.memoryBytes } : {}),
        ...(spec.limits.nanoCpus !== null ? { NanoCpus: spec.limits.nanoCpus } : {}),
        ...(spec.readOnlyRoot ? { ReadonlyRootfs: true, Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${TMP_SIZE}` } } : {}),
        // Nothing gained inside: no new privileges through setuid binaries, no capabilities beyond the default set's need.
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
      },
    });
  } catch (err) {
    throw new RollerError(ErrorCode.DOCKER_FAILED, `docker: a container could not be created from image ${spec.image} (${(err as Error).message}); build or load the image on this engine (roller never pulls)`, { cause: err });
  }
}

/** This process's containers that are running now: what a second Ctrl-C removes before roller leaves. */
const running = new Map<string, DockerContainer>();

/** Removes every container this process is running (at most `withinMs`): roller is leaving at once. */
export async function removeRunningContainers(withinMs = 5000): Promise<number> {
  const all = [...running.values()];
  const removals = Promise.all(all.map((c) => c.remove({ force: true, v: true }).catch(() => undefined)));
  await Promise.race([removals, new Promise((resolve) => setTimeout(resolve, withinMs).unref())]);
  return all.length;
}

/** A Docker API client for the engine at DOCKER_HOST (or the default socket), or the reason there is none. */
export async function connectDocker(): Promise<{ docker: DockerApi } | { reason: string }> {
  const { default: Docker } = await import('dockerode');
  const docker = new Docker({ version: DOCKER_API_VERSION }) as unknown as DockerApi;
  try {
    await Promise.race([docker.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('no answer in 3 s')), 3000).unref())]);
    return { docker };
  } catch (err) {
    return { reason: `no Docker engine answers at ${process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock'} (${(err as Error).message}); scripts/docker-engine.sh starts a private one` };
  }
}

/** The image's id (sha256:...), for the run lock: resume refuses another image under the same name. */
export async function imageId(docker: DockerApi, image: string): Promise<string> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (err) {
    throw new RollerError(ErrorCode.DOCKER_FAILED, `docker: image ${image} is not on this engine (${(err as Error).message}); build or load it (roller never pulls: docker build, docker load or docker import), then run again`, { cause: err });
  }
}

/**
 * Containers an earlier roller left (killed -9 before it could remove them): those of this run, and those whose
 * roller process on this host is gone. Removed, and counted, before a run starts its own.
 */
export async function removeLeftovers(docker: DockerApi, run: { runDir: string; host: string }): Promise<number> {
  const found = await docker.listContainers({ all: true, filters: JSON.stringify({ label: [SAMPLE_LABEL] }) });
  let removed = 0;
  for (const c of found) {
    const ours = c.Labels['dev.roller.run'] === run.runDir && c.Labels['dev.roller.pid'] !== String(process.pid);
    const orphan = c.Labels['dev.roller.host'] === run.host && !processAlive(Number(c.Labels['dev.roller.pid']));
    if (!ours && !orphan) continue;
    await docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined);
    removed++;
  }
  return removed;
}

