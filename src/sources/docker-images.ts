import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ErrorCode, RollerError } from '../core/errors.js';
import { chownTree } from './ownership.js';
import { runInDocker, type ContainerSpec, type DockerApi } from './docker-runner.js';

/** An image ready for a task's samples: its name, id, and the working directory its Dockerfile set. */
export interface TaskImage {
  name: string;
  id: string;
  /** WORKDIR of the image ('' or '/': none); the sample's work dir is mounted there too. */
  workdir: string;
  /** Built on the host's network (its task.toml asked); absent: no network. */
  buildNetwork?: 'host';
}

/**
 * A task's image from its build context (environment/ with its Dockerfile): built once per context digest (the tag
 * is the digest) and found again by it on the next run; the legacy builder, never pulling, with no network unless
 * the task asks for the host's (a Dockerfile's RUN would otherwise reach every service on the host's loopback).
 */
export async function buildTaskImage(api: DockerApi, context: string, tag: string, timeoutMs: number, notice?: (message: string) => void, network: 'none' | 'host' = 'none'): Promise<TaskImage> {
  const found = await api.getImage(tag).inspect().catch(() => null);
  if (found) return { name: tag, id: found.Id, workdir: found.Config?.WorkingDir ?? '' };
  notice?.(`docker: building ${tag} from ${context}${network === 'host' ? " on the host's network (its task.toml asks for it)" : ''}`);
  const src = (await readdir(context, { recursive: true, withFileTypes: true })).filter((e) => !e.isDirectory()).map((e) => relative(context, join(e.parentPath, e.name)));
  const failure = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(`the build ran past ${timeoutMs / 1000} s`), timeoutMs);
    api
      .buildImage({ context, src }, { t: tag, networkmode: network, pull: false, rm: true, forcerm: true, labels: JSON.stringify({ 'dev.roller.task-image': '1' }) })
      .then((stream) =>
        api.modem.followProgress(stream, (err, output) => {
          clearTimeout(timer);
          const said = output?.find((o) => o.error)?.error ?? output?.find((o) => o.errorDetail)?.errorDetail?.message;
          resolve(err ? err.message : said ?? null);
        }),
      )
      .catch((err: Error) => {
        clearTimeout(timer);
        resolve(err.message);
      });
  });
  if (failure) {
    const offline = network === 'none' ? '; the build has no network: a task whose Dockerfile fetches something says [environment] build_network = "host" in its task.toml' : '';
    throw new RollerError(ErrorCode.DOCKER_FAILED, `docker: building ${tag} from ${context}/Dockerfile failed: ${failure.trim()} (roller never pulls: a FROM image must be on the engine, e.g. roller-base from scripts/docker-engine.sh base-image${offline})`);
  }
  const built = await api.getImage(tag).inspect();
  return { name: tag, id: built.Id, workdir: built.Config?.WorkingDir ?? '' };
}

/**
 * The sample's work dir filled with what the image holds at its WORKDIR (the task's files, as Harbor's agent finds
 * them), copied by the image's own `cp -a` (links stay links), then handed to roller's user.
 */
export async function seedWorkDir(api: DockerApi, spec: ContainerSpec, image: TaskImage, work: string, logDir: string): Promise<void> {
  const outcome = await runInDocker(
    // Modes, times and links kept; owners not (no capability to set them): the files are roller's user's after.
    { command: '/bin/sh', args: ['-c', 'cp -dR --preserve=mode,timestamps "$0"/. /roller-seed/', image.workdir], cwd: '/', env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } },
    {
      // As root when roller is (root reads every file the image holds), else as roller's own user.
      container: { ...spec, image: image.name, network: 'none', user: process.getuid?.() === 0 ? { uid: 0, gid: 0 } : spec.user },
      docker: api,
      mounts: [{ path: work, target: '/roller-seed' }],
      timeoutMs: 120_000,
      stdoutPath: join(logDir, 'seed-stdout.log'),
      stderrPath: join(logDir, 'seed-stderr.log'),
    },
  );
  if (process.getuid?.() === 0) await chownTree(work, 0, process.getgid!());
  if (outcome.exitCode !== 0) throw new RollerError(ErrorCode.DOCKER_FAILED, `docker: copying ${image.workdir} of ${image.name} into the sample's work dir failed (exit ${outcome.exitCode ?? outcome.signal}; ${join(logDir, 'seed-stderr.log')})`);
}
