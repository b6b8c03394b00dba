import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { harnessAdapter } from '../harnesses/index.js';
import { compareReleases } from '../harnesses/release.js';
import { VERIFIED_VERSIONS, type VerifiedVersion } from '../harnesses/verified-versions.js';
import { releaseDates } from '../harnesses/installer.js';
import { verifyHarness, type ScenarioResult, type ScenarioRun, type ScenarioStatus } from './verify.js';

/**
 * The version matrix (docs/VERSIONS.md): each released CLI version run offline on the scripted model with the
 * scenarios below, its native files and captured calls kept as a fixture under
 * tests/fixtures/versions/<harness>/<version>/<scenario>/, converted in `npm test` with exact tokens per participant.
 */

/** The scenarios the version matrix records for a harness (its runner's verify.matrix; none for one without). */
export function matrixScenarios(harness: string): readonly string[] {
  return harnessAdapter(harness).runner?.verify?.matrix ?? [];
}

export const FIXTURE_SCHEMA = 'roller.version-fixture/v1';

/** fixture.json of one recorded scenario. */
export interface VersionFixture {
  schema: typeof FIXTURE_SCHEMA;
  harness: string;
  version: string;
  scenario: string;
  recorded_at: string;
  /** The day npm published this version (null when the registry could not say). */
  released_at: string | null;
  /** How the live run was judged (verify's checks on the full capture). */
  live: { status: ScenarioStatus; reason: string };
}

export const scenarioSlug = (name: string) => name.replace(/\W+/g, '-').replace(/^-|-$/g, '').toLowerCase();

/** Tools that spawn a sub-agent, by the names the harness versions offer them under. */
const SPAWN_TOOL = /^(Task|Agent|task|subagent|spawn_agent|.*\/spawn_agent)$/;

type Json = Record<string, any>;

/**
 * A call's request body as a fixture keeps it: only whether it generates and the names of the tools it offered (a
 * harness's counted-calls rule reads them: OpenCode's title requests offer none); prompts and history are left out.
 */
function trimmedContext(context: Json | null): Json | null {
  if (context?.generate === false) return { generate: false };
  const tools = context?.tools;
  return Array.isArray(tools) ? { tools: (tools as Json[]).map((t) => ({ name: String(t.name ?? t.function?.name ?? t.type) })) } : null;
}

/** The tool names the captured requests offered (Anthropic, Responses and Chat Completions shapes). */
function offeredTools(calls: readonly Json[]): Set<string> {
  const names = new Set<string>();
  for (const c of calls) {
    for (const t of ((c.context as Json | null)?.tools ?? []) as Json[]) {
      const name = t.name ?? t.function?.name;
      if (typeof name === 'string') names.add(typeof t.namespace === 'string' ? `${t.namespace}/${name}` : name);
      for (const sub of (t.tools ?? []) as Json[]) if (typeof sub.name === 'string') names.add(`${name}/${sub.name}`);
    }
  }
  return names;
}

/**
 * Keeps one scenario's run as a fixture: the native session files (the adapter's sessionFiles under the
 * converter root, nothing else of HOME) and calls.jsonl with each request body dropped (`context: null`: the
 * system prompts and tool lists are most of the bytes, and token accounting reads none of them).
 */
async function writeFixture(root: string, run: ScenarioRun, fails: readonly string[], releasedAt: string | null): Promise<ScenarioStatus> {
  const dir = join(root, run.harness, run.version, scenarioSlug(run.scenario));
  await rm(dir, { recursive: true, force: true });
  const adapter = harnessAdapter(run.harness);
  const files = (await readdir(run.nativeRoot, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(run.nativeRoot, join(e.parentPath, e.name)))
    .filter((rel) => adapter.sessionFiles.test(rel))
    .sort();
  for (const rel of files) {
    await mkdir(dirname(join(dir, 'native', rel)), { recursive: true });
    await copyFile(join(run.nativeRoot, rel), join(dir, 'native', rel));
  }
  const calls = (await readFile(run.callsPath, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
  const needsSpawn = run.scenario !== 'a tool call';
  const tools = offeredTools(calls);
  const noSpawnTool = needsSpawn && ![...tools].some((t) => SPAWN_TOOL.test(t));
  const status: ScenarioStatus = fails.length === 0 ? 'pass' : noSpawnTool ? 'not_applicable' : 'fail';
  const reason = noSpawnTool && fails.length > 0 ? `this version offers the model no sub-agent tool (offered: ${[...tools].sort().join(', ')})` : fails.join('; ');
  await writeFile(join(dir, 'calls.jsonl'), calls.map((c) => `${JSON.stringify({ ...c, context: trimmedContext(c.context as Json | null) })}\n`).join(''));
  const fixture: VersionFixture = { schema: FIXTURE_SCHEMA, harness: run.harness, version: run.version, scenario: run.scenario, recorded_at: new Date().toISOString(), released_at: releasedAt, live: { status, reason } };
  await writeFile(join(dir, 'fixture.json'), `${JSON.stringify(fixture, null, 2)}\n`);
  return status;
}

/** The CLI refused the scenario's feature switch: that release has no such feature (Codex's multi_agent_v2 before 0.120). */
const FEATURE_REFUSED = /Unknown feature flag: \S+|unexpected argument '--enable' found/;

function judged(r: ScenarioResult, recorded: { status: ScenarioStatus; reason: string } | undefined): ScenarioResult {
  if (recorded) return { ...r, ...recorded };
  const refused = r.status === 'fail' ? FEATURE_REFUSED.exec(r.reason) : null;
  return refused ? { ...r, status: 'not_applicable', reason: `this version has not the feature the scenario needs (the CLI said: ${refused[0]})` } : r;
}

/**
 * `roller verify --harness H --versions LIST --record DIR`: each version installed, the matrix scenarios run and
 * judged, each kept as a fixture. Returns the results by version.
 */
export async function recordVersions(
  harness: string,
  versions: readonly string[],
  options: { cacheDir?: string; fixtures: string; onResult?: (version: string, r: ScenarioResult) => void },
): Promise<Map<string, ScenarioResult[]>> {
  const out = new Map<string, ScenarioResult[]>();
  const released = await releaseDates(harness);
  for (const version of versions) {
    const statuses = new Map<string, { status: ScenarioStatus; reason: string }>();
    const results = await verifyHarness(harness, {
      ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      version,
      scenarios: matrixScenarios(harness),
      record: async (run, fails) => {
        const status = await writeFixture(options.fixtures, run, fails, released[version] ?? null);
        statuses.set(run.scenario, { status, reason: status === 'not_applicable' ? 'no sub-agent tool in this version' : fails.join('; ') });
      },
      onResult: (r) => options.onResult?.(version, judged(r, statuses.get(r.scenario))),
    }).catch((err: unknown) => matrixScenarios(harness).map((scenario): ScenarioResult => ({ scenario, status: 'not_run', reason: (err as Error).message, seconds: 0 })));
    out.set(
      version,
      results.map((r) => judged(r, statuses.get(r.scenario))),
    );
  }
  return out;
}

/** The matrix from the fixtures on disk: every version of every harness, with its scenarios' live results. */
export async function matrixOfFixtures(root: string): Promise<Record<string, VerifiedVersion[]>> {
  const out: Record<string, VerifiedVersion[]> = {};
  for (const harness of (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort()) {
    const versions: VerifiedVersion[] = [];
    for (const version of (await readdir(join(root, harness))).sort(compareReleases)) {
      const scenarios: VerifiedVersion['scenarios'] = {};
      let verifiedAt = '';
      let releasedAt: string | null = null;
      for (const slug of (await readdir(join(root, harness, version))).sort()) {
        const f = JSON.parse(await readFile(join(root, harness, version, slug, 'fixture.json'), 'utf8')) as VersionFixture;
        scenarios[f.scenario] = f.live.status;
        if (f.recorded_at > verifiedAt) verifiedAt = f.recorded_at;
        releasedAt = f.released_at ?? releasedAt;
      }
      versions.push({ version, released_at: releasedAt, verified_at: verifiedAt.slice(0, 10), scenarios });
    }
    out[harness] = versions;
  }
  return out;
}

/** docs/VERSIONS.md from the matrix. */
export function versionsMarkdown(matrix: Record<string, VerifiedVersion[]>): string {
  const lines = [
    '# Harness versions roller is verified against',
    '',
    'Generated by `roller verify --harness H --versions LIST --record tests/fixtures/versions` from the fixtures it',
    'recorded (do not edit by hand). Each version was installed from npm and run offline on the scripted model;',
    'its native files and calls are under tests/fixtures/versions/<harness>/<version>/, and `npm test` converts every',
    "one with each participant's tokens equal, kind by kind, to what the scripted server sent it.",
    '',
    '`pass`: the live run met every check of `roller verify`; `not_applicable`: the version offers no such tool;',
    '`fail`: the run finished but a check failed (the reason is in the fixture.json); `-`: not recorded (the release',
    "refused the scenario's feature switch, e.g. Codex's multi_agent_v2 before 0.120). How each release's records are",
    'read (token sources, sub-agent layouts): tests/fixtures/versions/README.md.',
    '',
  ];
  for (const [harness, versions] of Object.entries(matrix)) {
    const scenarios = [...new Set(versions.flatMap((v) => Object.keys(v.scenarios)))];
    const ordered = [...matrixScenarios(harness).filter((s) => scenarios.includes(s)), ...scenarios.filter((s) => !matrixScenarios(harness).includes(s))];
    const dates = versions.map((v) => v.released_at).filter((d): d is string => d !== null).sort();
    const span = dates.length > 1 ? `, released ${dates[0]} to ${dates.at(-1)}` : '';
    lines.push(`## ${harness} (${versions.length} versions${span})`, '', `| version | released | verified | ${ordered.join(' | ')} |`, `|---|---|---|${ordered.map(() => '---').join('|')}|`);
    for (const v of versions) lines.push(`| ${v.version} | ${v.released_at ?? '-'} | ${v.verified_at} | ${ordered.map((s) => v.scenarios[s] ?? '-').join(' | ')} |`);
    lines.push('');
  }
  return lines.join('\n');
}

/** src/harnesses/verified-versions.ts from the matrix. */
export function verifiedVersionsSource(matrix: Record<string, VerifiedVersion[]>): string {
  return [
    '// Generated from tests/fixtures/versions by `roller verify --versions … --record` (publishMatrix): do not edit.',
    '',
    'export interface VerifiedVersion {',
    '  version: string;',
    "  /** The day npm published it (null when the registry could not say). */",
    '  released_at: string | null;',
    '  /** The day its fixtures were recorded. */',
    '  verified_at: string;',
    "  scenarios: Record<string, 'pass' | 'fail' | 'not_applicable' | 'not_run'>;",
    '}',
    '',
    // One line per release: a new recording's diff is the rows it changed.
    'export const VERIFIED_VERSIONS: Readonly<Record<string, readonly VerifiedVersion[]>> = {',
    ...Object.entries(matrix).flatMap(([harness, versions]) => [`  ${JSON.stringify(harness)}: [`, ...versions.map((v) => `    ${JSON.stringify(v)},`), '  ],']),
    '};',
    '',
  ].join('\n');
}

/** Rewrites src/harnesses/verified-versions.ts and docs/VERSIONS.md from the fixtures. */
export async function publishMatrix(fixtures: string, repo: string): Promise<Record<string, VerifiedVersion[]>> {
  const matrix = await matrixOfFixtures(fixtures);
  await writeFile(join(repo, 'src', 'harnesses', 'verified-versions.ts'), verifiedVersionsSource(matrix));
  await writeFile(join(repo, 'docs', 'VERSIONS.md'), versionsMarkdown(matrix));
  return matrix;
}

export { VERIFIED_VERSIONS };
