import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import { defaultCacheDir } from '../harnesses/cache-dir.js';
import { VERIFIED_VERSIONS } from '../harnesses/verified-versions.js';
import { printLine } from './output.js';

/**
 * The commands about the harness CLIs themselves: `roller verify` (the acceptance scenarios, and the version matrix
 * with --versions) and `roller harness install | versions | list`.
 */
export function registerHarnessCommands(program: Command): void {
  program
    .command('verify')
    .description("run seeds/000's common acceptance scenarios on the real harness CLI, offline (scripted model, recording proxy), and judge each from the files")
    .requiredOption('--harness <name>', 'a harness with acceptance scenarios (roller harness list marks them)')
    .option('--cache-dir <dir>', 'where harnesses are installed', defaultCacheDir())
    .option('--versions <list>', "released versions to run instead of the pinned one (comma-separated), or 'all': every version of the matrix (docs/VERSIONS.md); runs the matrix scenarios")
    .option('--record <dir>', 'with --versions: keep each scenario as a fixture under DIR/<harness>/<version>/ (tests/fixtures/versions)')
    .option('--keep', 'keep the scenario directories (captures, native files) for inspection')
    .option('--model <provider/model>', 'run the scenarios on this API model of --model-config instead of the embedded scripted model (it must follow the scripted model\'s scenarios: a roller scripted-model served as a provider)')
    .option('--model-config <file>', 'the model config naming --model (as roller collect takes it)')
    .action(async (opts: { harness: string; cacheDir: string; versions?: string; record?: string; keep?: boolean; model?: string; modelConfig?: string }) => {
      const line = (r: { status: string; scenario: string; reason: string; seconds: number }, prefix = '') =>
        void printLine(`${prefix}${r.status.padEnd(14)} ${r.scenario}${r.reason ? ` — ${r.reason}` : ''}${r.seconds ? ` (${r.seconds.toFixed(1)} s)` : ''}`);
      (await import('../harnesses/index.js')).verifyOf(opts.harness); // refused here, before anything is installed
      let results: { status: string }[];
      if (opts.versions) {
        const matrix = await import('../pipelines/version-matrix.js');
        const versions = opts.versions === 'all' ? (matrix.VERIFIED_VERSIONS[opts.harness] ?? []).map((v) => v.version) : opts.versions.split(',').map((v) => v.trim()).filter(Boolean);
        if (versions.length === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--versions ${opts.versions}: no versions to run (the matrix of ${opts.harness} is empty; name versions: --versions 2.1.300,2.1.332)`);
        const { mkdtemp, rm } = await import('node:fs/promises');
        const fixtures = opts.record ?? (await mkdtemp(join((await import('node:os')).tmpdir(), 'roller-versions-')));
        const byVersion = await matrix.recordVersions(opts.harness, versions, { cacheDir: opts.cacheDir, fixtures, onResult: (v, r) => line(r, `${v.padEnd(10)} `) }).finally(() => (opts.record ? undefined : rm(fixtures, { recursive: true, force: true })));
        if (opts.record) await matrix.publishMatrix(opts.record, process.cwd()).catch((err: unknown) => process.stderr.write(`roller verify: the fixtures are recorded; docs/VERSIONS.md and src/harnesses/verified-versions.ts not rewritten (${(err as Error).message}): run from the repository root\n`));
        results = [...byVersion.values()].flat();
      } else {
        const model = await verifyModel(opts.harness, opts.model, opts.modelConfig);
        results = await (await import('../pipelines/verify.js')).verifyHarness(opts.harness, { cacheDir: opts.cacheDir, keep: opts.keep === true, onResult: (r) => line(r), onProgress: (m) => process.stderr.write(`roller verify: ${m}\n`), ...(model ? { model } : {}) });
      }
      const tally = (s: string) => results.filter((r) => r.status === s).length;
      process.stderr.write(`${tally('pass')} passed, ${tally('fail')} failed, ${tally('not_applicable')} not applicable, ${tally('not_run')} not run\n`);
      process.exitCode = tally('fail') + tally('not_run') > 0 ? 1 : 0;
    });

  const harness = program.command('harness').description('the pinned harness CLIs roller runs');
  harness
    .command('install')
    .description('install a harness CLI from npm into the cache (reused when present): NAME for the pinned version, NAME@VERSION for another released one; prints its path')
    .argument('<name[@version]>', 'a harness roller runs (roller harness list), optionally @<exact version>')
    .option('--cache-dir <dir>', 'where harnesses are installed', defaultCacheDir())
    .action(async (spec: string, opts: { cacheDir: string }) => {
      const at = spec.lastIndexOf('@');
      const given = at > 0 ? spec.slice(0, at) : spec;
      const { runnableHarnesses, harnessAdapter } = await import('../harnesses/index.js');
      if (!runnableHarnesses().includes(given)) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${given}: not a harness roller installs (one of: ${runnableHarnesses().join(', ')})`);
      const name = given;
      const version = at > 0 ? spec.slice(at + 1) : undefined;
      const verified = version === undefined || version === harnessAdapter(name).runner!.pin.version || (VERIFIED_VERSIONS[name] ?? []).some((v) => v.version === version);
      if (!verified) process.stderr.write(`roller harness install: warning: ${name} ${version} is not in roller's version matrix (roller harness versions ${name}); collect refuses it without --allow-unverified-version\n`);
      const installed = await (await import('../harnesses/installer.js')).installHarness(name, { cacheDir: opts.cacheDir, ...(version ? { version } : {}), onProgress: (m) => process.stderr.write(`roller harness install: ${m}\n`) });
      process.stderr.write(`${installed.reused ? 'already installed' : 'installed'}: ${installed.package}@${installed.version}\n`);
      await printLine(installed.bin);
    });
  harness
    .command('versions')
    .description("the versions of a harness roller is verified against (docs/VERSIONS.md): each version's release date, the day verified, and its scenarios")
    .argument('<name>', 'a harness name')
    .option('--json', 'the matrix rows as JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const rows = VERIFIED_VERSIONS[name];
      if (!rows) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${name}: no version matrix (harnesses with one: ${Object.keys(VERIFIED_VERSIONS).join(', ')})`);
      if (opts.json) return printLine(JSON.stringify(rows));
      const pinned = (await import('../harnesses/index.js')).findHarness(name)?.runner?.pin.version;
      const seen = new Set(rows.flatMap((r) => Object.keys(r.scenarios)));
      const order = (await import('../pipelines/version-matrix.js')).matrixScenarios(name);
      const scenarios = [...order.filter((sc) => seen.has(sc)), ...[...seen].filter((sc) => !order.includes(sc))];
      await printLine(`${'version'.padEnd(10)} ${'released'.padEnd(10)} ${'verified'.padEnd(10)} ${scenarios.join(' | ')}`);
      for (const r of rows) await printLine(`${r.version.padEnd(10)} ${(r.released_at ?? '-').padEnd(10)} ${r.verified_at.padEnd(10)} ${scenarios.map((sc) => r.scenarios[sc] ?? '-').join(' | ')}${r.version === pinned ? '  (pinned)' : ''}`);
      process.stderr.write(
        `pass: its run met every check; fail: its run did not (why: tests/fixtures/versions/${name}/<version>/<scenario>/fixture.json, or roller verify --harness ${name} --versions <version>); not_applicable: the release cannot express the scenario; -: not run for that version (docs/VERSIONS.md)\n`,
      );
    });
  harness
    .command('list')
    .description('the harnesses roller runs: the pinned CLI of each, whether `roller verify` has scenarios for it, and whether it is installed')
    .option('--cache-dir <dir>', 'where harnesses are installed', defaultCacheDir())
    .action(async (opts: { cacheDir: string }) => {
      const [{ findHarness, runnableHarnesses }, { harnessBin }] = await Promise.all([import('../harnesses/index.js'), import('../harnesses/installer.js')]);
      for (const name of runnableHarnesses()) {
        const runner = findHarness(name)!.runner!;
        const bin = harnessBin(join(opts.cacheDir, `${name}-${runner.pin.version}`), runner.pin);
        const present = await access(bin).then(() => true, () => false);
        await printLine(`${name.padEnd(12)} ${`${runner.pin.package}@${runner.pin.version}`.padEnd(42)} ${(runner.verify ? 'verify' : '-').padEnd(7)} ${present ? bin : 'not installed'}`);
      }
    });
}

/** roller verify --model: an API model of the config, in the protocol the harness calls it in, its base checked first. */
async function verifyModel(harness: string, id: string | undefined, configPath: string | undefined): Promise<import('../pipelines/verify.js').VerifyModel | undefined> {
  if (!id && !configPath) return undefined;
  if (!id || !configPath) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'roller verify: --model and --model-config go together (an API model and the config naming it)');
  const models = await import('../pipelines/collect/models.js');
  const resolved = models.resolveModel(id, await models.loadModelConfig(configPath));
  if (resolved.kind !== 'api') throw new RollerError(ErrorCode.INVALID_OPTIONS, `roller verify --model ${id}: the embedded scripted model is verify's default; name an API model`);
  const runner = (await import('../harnesses/index.js')).harnessAdapter(harness).runner!;
  const protocol = models.protocolFor(resolved, harness, runner.protocols);
  const model = { ...resolved, protocol };
  await (await import('../pipelines/collect/preflight.js')).checkModelApis([model]);
  const upstream = models.apiUpstream(model);
  return { upstream: upstream.url, ...(upstream.clientBasePath ? { clientBasePath: upstream.clientBasePath } : {}), ...(upstream.headers ? { headers: upstream.headers } : {}), key: model.apiKey, name: model.modelName, protocol };
}
