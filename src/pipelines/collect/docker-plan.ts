import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Task } from '../../schemas/task.js';
import { buildTaskImage, type TaskImage } from '../../sources/docker-images.js';
import { GRADER_SCRATCH } from './grader.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { parseSize } from '../../core/sizes.js';
import { connectDocker, DEFAULT_LIMITS, DEFAULT_MEMORY_BYTES, defaultNanoCpus, imageId, removeLeftovers, type ContainerLimits, type ContainerSpec, type DockerApi, type Mount } from '../../sources/docker-runner.js';

/** What --runner docker asks for: the image, and the container's user and limits (absent: the defaults). */
export interface DockerRequest {
  /** The image samples run in; a Harbor task's own image is built from its Dockerfile (absent: every task is one). */
  image?: string;
  /** The container's user; absent: roller's own when it is not root, else 1000:1000 (the base image's `agent`). */
  user?: { uid: number; gid: number };
  limits?: Partial<ContainerLimits>;
  /** host (default): the host's network; proxy: none but a relay to the sample's recording proxy. */
  network?: 'host' | 'proxy';
  /** A Docker API client to use instead of the engine at DOCKER_HOST (unit tests). */
  api?: DockerApi;
}

/** The docker runner of one run: its engine, the image's id (locked), and the container every sample gets. */
export interface DockerPlan {
  api: DockerApi;
  /** The --image's id; null when every task brings its own (Harbor). */
  imageId: string | null;
  container: ContainerSpec;
  /** Harbor tasks' images by task id (built before the first sample). */
  taskImages: ReadonlyMap<string, TaskImage>;
  /** The limits the flags gave (a Harbor task's [environment] outranks roller's defaults, not these). */
  given: Partial<ContainerLimits>;
}

/** Where a sample's harness, or its verifier, runs: the task's own image and resources when it has them. */
export function containerFor(plan: DockerPlan, task: Task): { container: ContainerSpec; workdir: string | null; env: Record<string, string> } {
  const image = plan.taskImages.get(task.id);
  const { limits } = plan.container;
  const given = plan.given;
  const workdir = image && image.workdir !== '' && image.workdir !== '/' ? image.workdir : null;
  return {
    container: {
      ...plan.container,
      image: image?.name ?? plan.container.image,
      // A flag outranks the task's [environment]; the task's outranks roller's defaults.
      limits: { ...limits, memoryBytes: given.memoryBytes ?? task.harbor?.memory_bytes ?? limits.memoryBytes, nanoCpus: given.nanoCpus ?? (task.harbor?.cpus ? Math.round(task.harbor.cpus * 1e9) : limits.nanoCpus) },
      // A Harbor task's image is the environment its agent works in (packages installed, files under /app, /etc).
      readOnlyRoot: !image,
    },
    workdir,
    env: task.harbor?.env ?? {},
  };
}

/** The ids of the images a Dockerfile starts FROM (a stage's own name excluded); one not on the engine: its name. */
async function fromImageIds(api: DockerApi, dockerfile: string): Promise<string[]> {
  const text = await readFile(dockerfile, 'utf8');
  const stages = new Set<string>();
  const ids: string[] = [];
  for (const m of text.matchAll(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/gim)) {
    const name = m[1]!;
    if (!stages.has(name.toLowerCase())) ids.push((await api.getImage(name).inspect().catch(() => null))?.Id ?? name);
    if (m[2]) stages.add(m[2].toLowerCase());
  }
  return ids;
}

/** HOME and the work dir at their own paths; the work dir also at the image's WORKDIR (where a Harbor task's files are). */
export function workMounts(home: string, work: string, workdir: string | null): Mount[] {
  return [{ path: home }, { path: work }, ...(workdir ? [{ path: work, target: workdir }] : [])];
}

/** A Harbor verifier's: the task's tests/ read-only at /tests, the grader's scratch (in HOME) at /logs/verifier. */
export function verifierMounts(task: Task, home: string): Mount[] {
  if (!task.harbor) return [];
  return [{ path: join(task.harbor.dir, 'tests'), target: '/tests', readOnly: true }, { path: join(home, GRADER_SCRATCH), target: '/logs/verifier' }];
}

/** Each Harbor task's image, built from its environment/ once per digest (or its docker_image, when the engine has it). */
export async function prepareTaskImages(plan: DockerPlan, tasks: readonly Task[], notice?: (message: string) => void): Promise<DockerPlan> {
  const images = new Map<string, TaskImage>();
  for (const task of tasks) {
    if (!task.harbor) continue;
    const given = task.harbor.docker_image ? await plan.api.getImage(task.harbor.docker_image).inspect().catch(() => null) : null;
    if (given && task.harbor.docker_image) {
      images.set(task.id, { name: task.harbor.docker_image, id: given.Id, workdir: given.Config?.WorkingDir ?? '' });
      continue;
    }
    // The tag: the build context and the images it starts FROM, so a rebuilt base is a new task image.
    const bases = await fromImageIds(plan.api, join(task.harbor.dir, 'environment', 'Dockerfile'));
    const digest = createHash('sha256').update(`${task.harbor.environment_digest}\n${bases.join('\n')}`).digest('hex').slice(0, 16);
    const tag = `roller-task-${task.id.toLowerCase().replace(/[^a-z0-9._-]/g, '-')}:${digest}`;
    images.set(task.id, { ...(await buildTaskImage(plan.api, join(task.harbor.dir, 'environment'), tag, 20 * 60_000, notice, task.harbor.build_network ?? 'none')), ...(task.harbor.build_network ? { buildNetwork: task.harbor.build_network } : {}) });
  }
  return { ...plan, taskImages: images };
}

/** The uid:gid a sample runs as when roller is root and no --docker-user is given: the base image's `agent`. */
const DEFAULT_USER = { uid: 1000, gid: 1000 };

/** Connects to the engine and checks the image is there (never pulled): a clear error before anything runs. */
export async function dockerPlan(request: DockerRequest): Promise<DockerPlan> {
  const own = process.getuid?.() ?? 0;
  const user = request.user ?? (own === 0 ? DEFAULT_USER : { uid: own, gid: process.getgid?.() ?? own });
  if (user.uid === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--docker-user 0: samples never run as root in their container; name another uid');
  // Only root can hand the sample's directories to another user (lchown); anyone else's container runs as themselves.
  if (own !== 0 && (user.uid !== own || user.gid !== (process.getgid?.() ?? own))) {
    throw new RollerError(ErrorCode.INVALID_OPTIONS, `--docker-user ${user.uid}:${user.gid}: roller runs as ${own}:${process.getgid?.() ?? own} and can hand the sample's directories only to itself; leave --docker-user out (your own user), or run roller as root`);
  }
  const connected = request.api ? { docker: request.api } : await connectDocker();
  if ('reason' in connected) throw new RollerError(ErrorCode.DOCKER_FAILED, `--runner docker: ${connected.reason}; or use --runner local`);
  const id = request.image ? await imageId(connected.docker, request.image) : null;
  return {
    api: connected.docker,
    imageId: id,
    container: {
      image: request.image ?? '',
      user,
      limits: { ...DEFAULT_LIMITS, memoryBytes: DEFAULT_MEMORY_BYTES, nanoCpus: defaultNanoCpus(), ...definedOf(request.limits ?? {}) },
      network: request.network ?? 'host',
      readOnlyRoot: true,
      labels: { 'dev.roller.host': hostname(), 'dev.roller.pid': String(process.pid) },
    },
    taskImages: new Map(),
    given: definedOf(request.limits ?? {}),
  };
}

function definedOf(limits: Partial<ContainerLimits>): Partial<ContainerLimits> {
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined && v !== null));
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
export function lockedContainer(plan: DockerPlan): { user: string; limits: ContainerLimits; network: ContainerSpec['network']; read_only_root: boolean; task_images?: Record<string, string>; networked_builds?: string[] } {
  const images = Object.fromEntries([...plan.taskImages].map(([id, image]) => [id, image.id]));
  const networked = [...plan.taskImages].filter(([, image]) => image.buildNetwork === 'host').map(([id]) => id);
  return {
    user: `${plan.container.user.uid}:${plan.container.user.gid}`,
    limits: plan.container.limits,
    network: plan.container.network,
    read_only_root: plan.taskImages.size === 0,
    ...(plan.taskImages.size > 0 ? { task_images: images } : {}),
    ...(networked.length > 0 ? { networked_builds: networked } : {}),
  };
}

/** `UID[:GID]` of --docker-user. */
export function parseDockerUser(text: string): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--docker-user ${text}: a numeric UID or UID:GID (e.g. 1000:1000)`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

/** --memory: a size (core/sizes.ts) Docker accepts, at least 6 MiB. */
export function parseMemory(text: string, what: string): number {
  const bytes = parseSize(text, what);
  if (bytes < 6 * 2 ** 20) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${what} ${text}: Docker needs at least 6 MiB`);
  return bytes;
}
