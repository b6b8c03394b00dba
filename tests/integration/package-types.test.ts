import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** What a user's script writes: the root API and each subpath, typed as the packed .d.ts files say. */
const CONSUMER = `
import { collect, convert, defineSink, openRun, sinkFrom, validateCapture, z, type Call, type FinishedSample, type Sink } from 'agent-roller';
import { Call as CallSchema, Relation } from 'agent-roller/schemas';
import { deriveRelations } from 'agent-roller/capture';
import { createDecoder } from 'agent-roller/protocols';
import { createCallsJsonlSink, sinks } from 'agent-roller/sinks';

const Options = z.strictObject({ path: z.string() });
export default defineSink({
  name: 'count',
  options: Options,
  create: ({ path }: z.infer<typeof Options>) => ({
    calls: sinkFrom<Call>('count', async (items) => {
      let n = 0;
      for await (const c of items) n += c.call_id.length > 0 ? 1 : 0;
      void path;
      void n;
    }),
  }),
});

export async function main(): Promise<void> {
  const run = await openRun('out/runs/demo');
  for await (const s of run.samples()) {
    const sample: FinishedSample = s;
    void sample.info.status;
    for await (const c of s.calls()) CallSchema.parse(c);
  }
  const mine: Sink<Call> = createCallsJsonlSink({ path: 'x.jsonl' });
  await collect({ tasks: 't.jsonl', harness: 'claude-code', models: ['scripted/default'], output: 'out', captureCalls: true, sinks: [{ calls: mine }] });
  void convert;
  void Relation;
  void deriveRelations;
  void validateCapture;
  void createDecoder('anthropic-messages');
  void sinks['calls-jsonl'];
}
`;

describe('the packed package, as a user installs it', () => {
  it('a consumer compiles against the tarball with skipLibCheck false (root and every subpath)', async () => {
    // Outside the checkout (inside it, 'agent-roller' would resolve to the checkout itself). Its production dependencies
    // (and nothing the checkout has only for development: a type the .d.ts needs from one fails here) are linked in
    // as an install would place them, with @types/node, the consumer's own.
    const dir = await mkdtemp(join(tmpdir(), 'roller-pack-'));
    dirs.push(dir);
    const modules = join(dir, 'node_modules');
    const production = (await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: repoRoot, maxBuffer: 1 << 24 })).stdout
      .split('\n')
      .filter((p) => p.startsWith(join(repoRoot, 'node_modules') + '/'))
      .map((p) => p.slice(join(repoRoot, 'node_modules').length + 1))
      .filter((p) => !p.includes('/node_modules/'));
    for (const name of [...new Set([...production, '@types/node', 'undici-types'])]) {
      await mkdir(dirname(join(modules, name)), { recursive: true });
      await symlink(join(repoRoot, 'node_modules', name), join(modules, name));
    }
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot });
    const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'))!;
    const installed = join(dir, 'node_modules', 'agent-roller');
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', join(dir, tarball), '-C', installed, '--strip-components=1']);
    await writeFile(join(dir, 'consumer.ts'), CONSUMER);
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] }, files: ['consumer.ts'] }),
    );
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(result).toBe('');
  }, 120_000);

  it('installs from its packed tarball and runs from any directory: the roller command, and a script importing agent-roller', async () => {
    // As the README says: npm pack in the checkout, then npm install -g of the tarball (here into a prefix of the
    // test's own), and npm install of it beside a script in a folder of its own. Scripts are not run (the native
    // SQLite binding is not needed by what this runs), dependencies come from npm's cache when it has them.
    // (agent-roller/testing runs under vitest, an optional peer dependency: not imported by a plain script.)
    const dir = await mkdtemp(join(tmpdir(), 'roller-install-'));
    dirs.push(dir);
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot });
    const tarball = join(dir, (await readdir(dir)).find((f) => f.endsWith('.tgz'))!);
    const npmFlags = ['--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
    const prefix = join(dir, 'global');
    await run('npm', ['install', '-g', '--prefix', prefix, ...npmFlags, tarball], { cwd: dir, maxBuffer: 1 << 24, timeout: 600_000 });
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    const version = await run(join(prefix, 'bin', 'roller'), ['--version'], { cwd: elsewhere });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await run(join(prefix, 'bin', 'roller'), ['collect', '--help'], { cwd: elsewhere });
    expect(help.stdout).toContain('--pi-subagent-extension');
    const project = join(dir, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'a-users-project', private: true, type: 'module' }));
    await run('npm', ['install', ...npmFlags, tarball], { cwd: project, maxBuffer: 1 << 24, timeout: 600_000 });
    await writeFile(join(project, 'script.mjs'), "import { collect, openRun } from 'agent-roller';\nimport { Call } from 'agent-roller/schemas';\nconsole.log(typeof collect, typeof openRun, typeof Call.parse);\n");
    const script = await run(process.execPath, ['script.mjs'], { cwd: project });
    expect(script.stdout.trim()).toBe('function function function');
  }, 900_000);
});
