import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessAdapter } from '../../src/harnesses/index.js';
import { VERIFIED_VERSIONS } from '../../src/harnesses/verified-versions.js';
import { convertNative } from '../../src/pipelines/convert.js';
import { matrixOfFixtures, versionsMarkdown, verifiedVersionsSource, type VersionFixture } from '../../src/pipelines/version-matrix.js';
import type { Call } from '../../src/schemas/call.js';
import type { ParticipantUsage } from '../../src/schemas/participant-usage.js';
import { attributeCalls, joinCallToSole, tokenDisagreements } from '../../src/transforms/capture/index.js';
import type { HeaderJoin } from '../../src/schemas/native-capture.js';
import { CODEX_CALL_THREAD_FIELDS } from '../../src/harnesses/codex/participants.js';

/**
 * Every fixture of the version matrix (tests/fixtures/versions/<harness>/<version>/<scenario>/: the native files
 * and the captured calls of a real CLI run on the scripted model) converts, and each participant's tokens equal,
 * kind by kind, what the scripted server sent the calls attributed to it (by response id, or the harness's header).
 */
const ROOT = join(import.meta.dirname, '..', 'fixtures', 'versions');

const fixtures = existsSync(ROOT)
  ? readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .flatMap((harness) =>
      readdirSync(join(ROOT, harness)).flatMap((version) => readdirSync(join(ROOT, harness, version)).map((slug) => ({ harness, version, slug, dir: join(ROOT, harness, version, slug) }))),
    )
  : [];

/** Every byte of the native files, to tell which responses the CLI recorded at all. */
function nativeBytes(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

/**
 * A model call the CLI makes for itself and never records in its session (Claude Code's command-prefix check and
 * title calls): its response id is in no native file, so no reader can count it; OpenCode's and dsh's title requests likewise.
 * Every other call must be counted.
 */
function helperCall(harness: string, call: Call, native: string): boolean {
  if (harness === 'claude-code') return call.response_id != null && !native.includes(call.response_id);
  // OpenCode's and dsh's title requests (the adapter's auxiliary-call rule: they offer no tools) write no message.
  return harnessAdapter(harness).auxiliaryCall?.test(call) ?? false;
}

/**
 * Where each participant's tokens disagree with what the server sent the calls joined to it — joined as the harness's
 * capture contract joins them: by response id or identity header, and (OpenCode before 1.17, Pi before 0.60: neither
 * names a response id or sends a session header; Hermes before 0.17) a one-session run's calls to that session. Where calls still join no one (such a run with sub-agents), a
 * participant cannot be checked on its own: the sum of all is, against all the calls.
 */
function disagreements(harness: string, calls: Call[], participants: ParticipantUsage[], checked: ParticipantUsage[], field: HeaderJoin['field'] | undefined): string[] {
  const byEvidence = attributeCalls(calls, participants, field);
  // OpenCode before 1.17 and Pi before 0.60 name no response id and send no session header of their own; nor does
  // Hermes before 0.17, where roller's plugin (its llm_request middleware) does not load.
  if (!['opencode', 'pi', 'hermes'].includes(harness) || byEvidence.some((c) => c.participant_id !== null)) return tokenDisagreements(byEvidence, checked);
  const root = participants.find((p) => p.role === 'root')!;
  if (participants.length === 1) return tokenDisagreements(byEvidence.map((c) => joinCallToSole(c, { participant: root.participant, evidence: 'one session, its own proxy' })), checked);
  const kinds = [['input', 'input'], ['cache_read', 'cached_input'], ['cache_creation', 'cache_creation'], ['output', 'output'], ['reasoning', 'reasoning']] as const;
  return kinds
    .filter(([mine]) => !participants.some((p) => p.unknown_kinds?.includes(mine)))
    .filter(([mine, wire]) => participants.reduce((a, p) => a + p.tokens[mine], 0) !== calls.reduce((a, c) => a + (c.usage.normalized?.[wire] ?? 0), 0))
    .map(([mine]) => `all participants: ${mine} differs from all the calls`);
}

async function converted(f: { harness: string; dir: string }, calls: Call[] | undefined): Promise<ParticipantUsage[]> {
  const out = await mkdtemp(join(tmpdir(), 'roller-version-'));
  try {
    const sessions = await convertNative({ harness: f.harness, native: join(f.dir, 'native'), out, keepThinking: true, ...(calls ? { calls } : {}) });
    expect(sessions.length, 'one root session').toBe(1);
    return sessions[0]!.participants;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The identity header each harness's capture contract joins its calls by, where its records name no response id. */
const HEADER_FIELD: Record<string, HeaderJoin['field'] | undefined> = { codex: CODEX_CALL_THREAD_FIELDS, opencode: 'session_id', deepseek: 'session_id', hermes: 'session_id' };

describe('version matrix fixtures', () => {
  it('the matrix holds at least 20 Claude Code and 20 Codex versions', () => {
    const versions = (h: string) => new Set(fixtures.filter((f) => f.harness === h).map((f) => f.version)).size;
    expect(versions('claude-code')).toBeGreaterThanOrEqual(20);
    expect(versions('codex')).toBeGreaterThanOrEqual(20);
  });

  it('docs/VERSIONS.md and verified-versions.ts are what the fixtures say', async () => {
    const matrix = await matrixOfFixtures(ROOT);
    expect(readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'VERSIONS.md'), 'utf8')).toBe(versionsMarkdown(matrix));
    expect(readFileSync(join(import.meta.dirname, '..', '..', 'src', 'harnesses', 'verified-versions.ts'), 'utf8')).toBe(verifiedVersionsSource(matrix));
    expect(Object.keys(VERIFIED_VERSIONS).sort()).toEqual(Object.keys(matrix).sort());
  });

  for (const f of fixtures) {
    it(`${f.harness} ${f.version}: ${f.slug} converts with exact tokens per participant`, async () => {
      const fixture = JSON.parse(readFileSync(join(f.dir, 'fixture.json'), 'utf8')) as VersionFixture;
      const all = readFileSync(join(f.dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
      const calls = all.filter((c) => !helperCall(f.harness, c, nativeBytes(join(f.dir, 'native'))));
      const field = HEADER_FIELD[f.harness];
      // From the native files alone: every participant exact, or marked unknown with why (never a silent zero).
      const alone = await converted(f, undefined);
      const known = alone.filter((p) => p.tokens_status !== 'unknown');
      for (const p of alone.filter((q) => q.tokens_status === 'unknown')) expect(p.tokens_note, `${p.participant} says why its tokens are unknown`).toMatch(/unknown, not zero/);
      const unknownIds = new Set(alone.filter((p) => p.tokens_status === 'unknown').map((p) => p.participant));
      const joinedAlone = attributeCalls(calls, alone, field);
      expect(disagreements(f.harness, calls.filter((_, i) => !unknownIds.has(joinedAlone[i]!.participant_id ?? '')), alone, known, field)).toEqual([]);
      // With the capture (convert --wire): every participant exact — but one whose file holds no model message
      // (Claude Code 2.1.36's background sub-agent): no id joins its calls to it, so it stays unknown.
      // The fixture keeps only the offered tools' names (for the counted-calls rule), not tool schemas to convert from.
      const withWire = await converted(f, all.map((c) => ({ ...c, context: (c.context as { generate?: unknown } | null)?.generate === false ? c.context : null })));
      const unwritten = withWire.filter((p) => p.tokens_status === 'unknown');
      for (const p of unwritten) expect(p.tokens_note).toMatch(/holds no model message/);
      expect(disagreements(f.harness, calls, withWire, withWire.filter((p) => !unwritten.includes(p)), field)).toEqual([]);
      if (fixture.live.status === 'pass') expect(withWire.filter((p) => p.role === 'child').every((p) => p.parent !== null)).toBe(true);
    });
  }
});
