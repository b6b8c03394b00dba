import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import type Dockerode from 'dockerode';
import { ErrorCode, RollerError } from '../core/errors.js';
import type { ProcessOutcome, ProcessPlan, RunProcessOptions } from './process-runner.js';

/** The part of dockerode the runner uses (a real Dockerode instance, or a stand-in in tests). */
export interface DockerApi {
  ping(): Promise<unknown>;
  getImage(name: string): { inspect(): Promise<{ Id: string }> };
  createContainer(options: Dockerode.ContainerCreateOptions): Promise<DockerContainer>;
  modem: { demuxStream(stream: NodeJS.ReadableStream, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): void };
}

export interface DockerContainer {
  id: string;
  attach(options: Dockerode.ContainerAttachOptions): Promise<NodeJS.ReadWriteStream>;
  start(): Promise<unknown>;
  wait(): Promise<{ StatusCode: number }>;
  kill(options?: { signal?: string }): Promise<unknown>;
  remove(options?: { force?: boolean; v?: boolean }): Promise<unknown>;
}

export interface DockerRunOptions extends RunProcessOptions {
  image: string;
  /** Host paths mounted at the same path in the container (HOME, the work dir, the pinned CLI). */
  mounts: { path: string; readOnly?: boolean }[];
  /**
   * Host networking: the container reaches the recording proxy on the host's 127.0.0.1. Required when
   * calls are captured (the proxy binds loopback only).
   */
  hostNetwork: boolean;
  docker: DockerApi;
}

/** Docker engine API version pinned: what the runner was written against (Engine ≥ 20.10). */
export const DOCKER_API_VERSION = 'v1.41';

/**
 * Runs a harness plan in a container: the same command, arguments, environment and working directory as
 * the local runner, the plan's directories mounted at the same paths, stdout and stderr demultiplexed into
 * the same files. A timeout or an abort kills the container; it is removed whatever happened, so no sample
 * leaves one behind.
 */
export async function runInDocker(plan: ProcessPlan, options: DockerRunOptions): Promise<ProcessOutcome> {
  await mkdir(dirname(options.stdoutPath), { recursive: true });
  await mkdir(dirname(options.stderrPath), { recursive: true });
  const stdout = createWriteStream(options.stdoutPath);
  const stderr = createWriteStream(options.stderrPath);
  const started = Date.now();
  let container: DockerContainer;
  try {
    container = await options.docker.createContainer({
      Image: options.image,
      // A prompt on stdin comes from its file (in a mounted directory) by the image's shell: no stream to attach.
      Cmd: plan.stdin === undefined ? [plan.command, ...plan.args] : ['/bin/sh', '-c', 'exec "$0" "$@" < "$ROLLER_STDIN"', plan.command, ...plan.args],
      Env: Object.entries(plan.stdin === undefined ? plan.env : { ...plan.env, ROLLER_STDIN: plan.stdin }).map(([k, v]) => `${k}=${v}`),
      WorkingDir: plan.cwd,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      OpenStdin: false,
      Labels: { 'dev.roller.sample': '1' },
      HostConfig: {
        Binds: options.mounts.map((m) => `${m.path}:${m.path}${m.readOnly ? ':ro' : ''}`),
        NetworkMode: options.hostNetwork ? 'host' : 'bridge',
        AutoRemove: false,
        Init: true, // a harness's background children are reaped and signalled with it
      },
    });
  } catch (err) {
    stdout.end();
    stderr.end();
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `docker: the container could not be created from image ${options.image} (${(err as Error).message}); pull or build the image first`, { cause: err });
  }
  let timedOut = false;
  let aborted = false;
  const kill = () => void container.kill().catch(() => undefined); // already stopped: nothing to do
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let exitCode: number | null = null;
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    options.docker.modem.demuxStream(stream, stdout, stderr);
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    await container.start();
    exitCode = (await container.wait()).StatusCode;
    await ended;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    await container.remove({ force: true, v: true }).catch(() => undefined);
    stdout.end();
    stderr.end();
    await Promise.all([finished(stdout), finished(stderr)]);
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

/** A Docker API client for the local engine, or the reason there is none (no socket, not answering). */
export async function connectDocker(): Promise<{ docker: DockerApi } | { reason: string }> {
  const { default: Docker } = await import('dockerode');
  const docker = new Docker({ version: DOCKER_API_VERSION }) as unknown as DockerApi;
  try {
    await Promise.race([docker.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('no answer in 3 s')), 3000).unref())]);
    return { docker };
  } catch (err) {
    return { reason: `no Docker engine answers at ${process.env.DOCKER_HOST ?? '/var/run/docker.sock'} (${(err as Error).message})` };
  }
}

/** The image's id (sha256:...), for the run lock: resume refuses another image under the same name. */
export async function imageId(docker: DockerApi, image: string): Promise<string> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (err) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `docker: image ${image} is not on this engine (${(err as Error).message}); pull or build it, then run again`, { cause: err });
  }
}
