import { hostname } from 'node:os';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { connectDocker, DEFAULT_LIMITS, imageId, removeLeftovers, type ContainerLimits, type ContainerSpec, type DockerApi } from '../../sources/docker-runner.js';

/** What --runner docker asks for: the image, and the container's user and limits (absent: the defaults). */
export interface DockerRequest {
  image: string;
  /** The container's user; absent: roller's own when it is not root, else 1000:1000 (the base image's `agent`). */
  user?: { uid: number; gid: number };
  limits?: Partial<ContainerLimits>;
  /** A Docker API client to use instead of the engine at DOCKER_HOST (unit tests). */
  api?: DockerApi;
}

/** The docker runner of one run: its engine, the image's id (locked), and the container every sample gets. */
export interface DockerPlan {
  api: DockerApi;
  imageId: string;
  container: ContainerSpec;
}

/** The uid:gid a sample runs as when roller is root and no --docker-user is given: the base image's `agent`. */
const DEFAULT_USER = { uid: 1000, gid: 1000 };

/** Connects to the engine and checks the image is there (never pulled): a clear error before anything runs. */
export async function dockerPlan(request: DockerRequest): Promise<DockerPlan> {
  const connected = request.api ? { docker: request.api } : await connectDocker();
  if ('reason' in connected) throw new RollerError(ErrorCode.DOCKER_FAILED, `--runner docker: ${connected.reason}; or use --runner local`);
  const id = await imageId(connected.docker, request.image);
  const own = process.getuid?.() ?? 0;
  const user = request.user ?? (own === 0 ? DEFAULT_USER : { uid: own, gid: process.getgid?.() ?? own });
  if (user.uid === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--docker-user 0: samples never run as root in their container; name another uid');
  return {
    api: connected.docker,
    imageId: id,
    container: {
      image: request.image,
      user,
      limits: { ...DEFAULT_LIMITS, ...request.limits },
      network: 'host',
      labels: { 'dev.roller.host': hostname(), 'dev.roller.pid': String(process.pid) },
    },
  };
}

/** The plan with its run's label: the containers of a run a killed roller left are found by it. */
export function forRun(plan: DockerPlan, runDir: string): DockerPlan {
  return { ...plan, container: { ...plan.container, labels: { ...plan.container.labels, 'dev.roller.run': runDir } } };
}

/** Containers a killed roller left (this run's, or any whose roller on this host is gone): removed before the run starts. */
export async function clearLeftoverContainers(plan: DockerPlan, runDir: string, notice?: (message: string) => void): Promise<void> {
  const removed = await removeLeftovers(plan.api, { runDir, host: hostname() });
  if (removed > 0) notice?.(`docker: removed ${removed} container(s) a killed roller left behind`);
}

/** What lock.json keeps of the container: a resume under another user, limits or network is refused. */
export function lockedContainer(plan: DockerPlan): { user: string; limits: ContainerLimits; network: ContainerSpec['network'] } {
  return { user: `${plan.container.user.uid}:${plan.container.user.gid}`, limits: plan.container.limits, network: plan.container.network };
}

/** `UID[:GID]` of --docker-user. */
export function parseDockerUser(text: string): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--docker-user ${text}: a numeric UID or UID:GID (e.g. 1000:1000)`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

/** A size as Docker and Harbor write it (`512m`, `2G`, `1.5g`, or bytes), in bytes. */
export function parseSize(text: string, what: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(text.trim());
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${text}: a size such as 512m or 2g`);
  const scale = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  const bytes = Math.round(Number(m[1]) * scale);
  if (bytes < 6 * 2 ** 20) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${text}: Docker needs at least 6 MiB`);
  return bytes;
}
