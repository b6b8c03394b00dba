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
import { collect, convert, defineSink, openRun, sinkFrom, validateCapture, z, type Call, type FinishedSample, type Sink } from 'roller';
import { Call as CallSchema, Relation } from 'roller/schemas';
import { deriveRelations } from 'roller/capture';
import { createDecoder } from 'roller/protocols';
import { createCallsJsonlSink, sinks } from 'roller/sinks';

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
    // Outside the checkout (inside it, 'roller' would resolve to the checkout itself). Its production dependencies
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
    const installed = join(dir, 'node_modules', 'roller');
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
});
