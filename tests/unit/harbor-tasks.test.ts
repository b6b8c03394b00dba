import { cpSync, mkdirSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../src/core/errors.js';
import { HARBOR_VERIFIER, loadHarborTasks, treeDigest } from '../../src/pipelines/collect/harbor-tasks.js';
import { parseDockerUser, parseMemory as parseSize } from '../../src/pipelines/collect/docker-plan.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('harbor-tasks');
const examples = join(repoRoot, 'examples', 'harbor');

describe('Harbor task directories as tasks', () => {
  it('the examples: ids from the directories in name order, the instruction as the prompt, timeouts, resources, verifier env', async () => {
    const bundle = await loadHarborTasks(examples);
    expect(bundle.tasks.map((t) => t.id)).toEqual(['keep-notes', 'say-hello-only', 'write-hello']);
    const [keep, , write] = bundle.tasks;
    expect(write!.prompt).toBe('[WRITE] Write hi into hello.txt in the current directory.\n');
    expect(write).toMatchObject({ timeout_s: 300, grader: { command: HARBOR_VERIFIER, timeout_s: 60 }, harbor: { dir: join(examples, 'write-hello'), cpus: 1, memory_bytes: 2048 * 2 ** 20 } });
    expect(keep).toMatchObject({ grader: { env: { EXPECTED: 'hi' } }, harbor: { memory_bytes: 2 * 2 ** 30 }, metadata: { tags: ['roller', 'reward-json'] } });
    expect(bundle.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // One task directory on its own, also with the harbor: prefix.
    expect((await loadHarborTasks(`harbor:${join(examples, 'write-hello')}`)).tasks.map((t) => t.id)).toEqual(['write-hello']);
  });

  it('the digest covers every file: a changed byte, an executable bit or a link target is another bundle', async () => {
    const dir = join(tmp.path, 'digest', 'write-hello');
    cpSync(join(examples, 'write-hello'), dir, { recursive: true });
    const before = (await loadHarborTasks(dir)).digest;
    writeFileSync(join(dir, 'tests', 'extra.txt'), 'x');
    const afterFile = (await loadHarborTasks(dir)).digest;
    expect(afterFile).not.toBe(before);
    symlinkSync('/etc/hostname', join(dir, 'environment', 'link'));
    const withLink = await treeDigest(join(dir, 'environment'));
    rmSync(join(dir, 'environment', 'link'));
    symlinkSync('/etc/hosts', join(dir, 'environment', 'link'));
    expect(await treeDigest(join(dir, 'environment'))).not.toBe(withLink);
  });

  it('a broken task is named with its file before anything runs; all problems at once', async () => {
    const root = join(tmp.path, 'broken');
    const task = (name: string, files: Record<string, string>) => {
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(join(root, name, rel, '..'), { recursive: true });
        writeFileSync(join(root, name, rel), text);
      }
    };
    task('bad-toml', { 'task.toml': '[agent\n', 'instruction.md': 'x', 'environment/Dockerfile': 'FROM x', 'tests/test.sh': '' });
    task('no-instruction', { 'task.toml': '', 'environment/Dockerfile': 'FROM x', 'tests/test.sh': '' });
    task('bad-timeout', { 'task.toml': '[agent]\ntimeout_sec = "soon"\n', 'instruction.md': 'x', 'environment/Dockerfile': 'FROM x', 'tests/test.sh': '' });
    task('bad-memory', { 'task.toml': '[environment]\nmemory_mb = "lots"\n', 'instruction.md': 'x', 'environment/Dockerfile': 'FROM x', 'tests/test.sh': '' });
    task('bad-env', { 'task.toml': '[verifier.env]\nN = 3\n', 'instruction.md': 'x', 'environment/Dockerfile': 'FROM x', 'tests/test.sh': '' });
    const err = await loadHarborTasks(root).catch((e: unknown) => e);
    expect(isRollerError(err)).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain(`${join(root, 'bad-toml', 'task.toml')}:`);
    expect(message).toContain(`${join(root, 'no-instruction', 'instruction.md')}: missing (the task's prompt)`);
    expect(message).toContain('[agent].timeout_sec must be a number of seconds above 0');
    expect(message).toContain('[verifier.env] must be a table of strings');
    expect(message).toContain('[environment] memory_mb must be a number above 0');
    const empty = join(tmp.path, 'empty');
    mkdirSync(empty);
    await expect(loadHarborTasks(empty)).rejects.toThrow(/holds no Harbor task/);
  });

  it('sizes and users as the flags take them', () => {
    expect(parseSize('512m', '--memory')).toBe(512 * 2 ** 20);
    expect(parseSize('2G', '--memory')).toBe(2 * 2 ** 30);
    expect(parseSize('1.5g', '--memory')).toBe(1.5 * 2 ** 30);
    expect(() => parseSize('lots', '--memory')).toThrow('--memory lots: a size such as 512m or 2g');
    expect(() => parseSize('1m', '--memory')).toThrow('Docker needs at least 6 MiB');
    expect(parseDockerUser('1000')).toEqual({ uid: 1000, gid: 1000 });
    expect(parseDockerUser('1000:100')).toEqual({ uid: 1000, gid: 100 });
    expect(() => parseDockerUser('agent')).toThrow('a numeric UID or UID:GID');
  });
});
