/**
 * Damaged and incomplete archives through `roller convert` and `roller usage` (issue 31, items 11, 12 and 15): real
 * session files of the real CLIs (tests/fixtures), copied and damaged the way a crash or a lost file leaves them.
 * What is missing is listed as missing, what is damaged is named with its file and line, and nothing is silently ok.
 */
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { looksLikeCredential, redactConfig } from '../../src/pipelines/collect/lock.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import { roller } from '../support/roller-cli.js';

type Json = Record<string, any>;
const tmp = useTempDir('faults-offline');


const claudeLab = join(repoRoot, 'tests/fixtures/claude-code/lab-single');
const session = '19dd1dea-c596-40d9-b460-8755a96c03f8';
const agent = 'a3295bf2ab09c0be8';
const codexDay = join(repoRoot, 'tests/fixtures/codex/lab/sessions/2026/11/30');
const codexRoot = 'rollout-2026-11-30T06-53-42-01a22b3b-143a-7721-b9f8-abb58f73e2e2.jsonl';
const codexChild = 'rollout-2026-11-30T06-53-43-01a22b3b-1941-7241-93cc-4715a620a477.jsonl';
const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;

function claudeCopy(name: string): { dir: string; project: string } {
  const dir = join(tmp.path, name);
  cpSync(join(claudeLab, 'projects'), join(dir, 'projects'), { recursive: true });
  return { dir, project: join(dir, 'projects', '-workspace-demo') };
}

function codexCopy(name: string): string {
  const dir = join(tmp.path, name, 'sessions');
  cpSync(join(codexDay, codexRoot), join(dir, codexRoot));
  cpSync(join(codexDay, codexChild), join(dir, codexChild));
  return join(tmp.path, name);
}

describe('11. a sub-agent its parent names, whose file is missing, is listed as missing: never dropped, never zero', () => {
  it('claude-code convert: a participant with status missing and the record naming it, a warning, exit 1 unless --allow-partial', async () => {
    const { dir, project } = claudeCopy('claude-missing');
    rmSync(join(project, session, 'subagents', `agent-${agent}.jsonl`));
    rmSync(join(project, session, 'subagents', `agent-${agent}.meta.json`));
    const r = await roller('convert', '--harness', 'claude-code', '--native', dir, '--out', join(tmp.path, 'claude-missing-out'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`roller convert: warning: agent:${agent} is missing: .*${session}\\.jsonl:\\d+ names sub-agent ${agent}, but ${session}/subagents/agent-${agent}\\.jsonl is not there: its tokens are unknown`));
    expect(r.stderr).toContain('--allow-partial');
    const usage = readJson(join(tmp.path, 'claude-missing-out', 'usage.json'));
    expect(usage.participants.map((p: Json) => [p.participant, p.status])).toEqual([
      [`session:${session}`, 'completed'],
      [`agent:${agent}`, 'missing'],
    ]);
    expect(usage.participants[1]).toMatchObject({ parent: `session:${session}`, depth: 1, spawn_tool_call_id: expect.stringMatching(/^toolu_/) });
    expect(usage.partial).toEqual({ missing: [`agent:${agent}`], reason: expect.stringContaining('tokens are unknown') });
    const allowed = await roller('convert', '--harness', 'claude-code', '--native', dir, '--out', join(tmp.path, 'claude-missing-out-2'), '--allow-partial');
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain('is missing');
  });

  it('roller usage --harness claude-code: the missing file is a row, the totals are marked partial, exit 1 unless --allow-partial', async () => {
    const { dir, project } = claudeCopy('usage-missing');
    rmSync(join(project, session, 'subagents', `agent-${agent}.jsonl`));
    const r = await roller('usage', '--harness', 'claude-code', dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  agent:${agent}`);
    expect(r.stdout).toMatch(new RegExp(`missing: named by .*${session}\\.jsonl, no .*agent-${agent}\\.jsonl`));
    expect(r.stdout).toContain('PARTIAL');
    expect(r.stderr).toContain(`roller usage: warning: agent:${agent} is named by`);
    const json = await roller('usage', '--harness', 'claude-code', dir, '--json', '--allow-partial');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Json;
    expect(report.partial).toMatchObject({ missing: 1 });
    expect(report.participants.find((p: Json) => p.participant === `agent:${agent}`)).toMatchObject({ missing: { referenced_by: expect.stringContaining(`${session}.jsonl`) } });
    // With the file there, nothing is missing and the exit is 0.
    const whole = await roller('usage', '--harness', 'claude-code', claudeCopy('usage-whole').dir);
    expect(whole.code).toBe(0);
    expect(whole.stdout).not.toContain('PARTIAL');
  });

  it('codex convert: a child thread a spawn names, its rollout not read, is a missing participant; exit 1 unless --allow-partial', async () => {
    const home = codexCopy('codex-missing');
    rmSync(join(home, 'sessions', codexChild));
    const r = await roller('convert', '--harness', 'codex', '--native', home, '--out', join(tmp.path, 'codex-missing-out'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('roller convert: warning: thread:01a22b3b-1941-7241-93cc-4715a620a477 is missing');
    const usage = readJson(join(tmp.path, 'codex-missing-out', 'usage.json'));
    expect(usage.participants.map((p: Json) => p.status)).toEqual(['completed', 'missing']);
  });
});

describe('12. damaged native files: what is damaged is said with file and line; what is intact is converted; no SFT from a cut trajectory', () => {
  it('claude-code: a final assistant line cut mid-JSON makes SFT unavailable with the line, printed on stderr', async () => {
    const { dir, project } = claudeCopy('claude-cut');
    const file = join(project, `${session}.jsonl`);
    const lines = readFileSync(file, 'utf8').split('\n');
    const last = lines.map((l, i) => (l.includes('"type":"assistant"') ? i : -1)).filter((i) => i >= 0).at(-1)!;
    writeFileSync(file, `${lines.slice(0, last).join('\n')}\n${lines[last]!.slice(0, Math.floor(lines[last]!.length / 2))}`);
    const r = await roller('convert', '--harness', 'claude-code', '--native', dir, '--out', join(tmp.path, 'claude-cut-out'));
    expect(r.stdout).toContain('SFT unavailable (the main session is damaged');
    expect(r.stdout).toContain(`${session}.jsonl:${last + 1}`);
    expect(r.stderr).toMatch(new RegExp(`roller convert: -workspace-demo/${session}\\.jsonl:${last + 1}: line not read \\(.*\\) \\[ROLLER_JSONL_`));
    expect(readdirSync(join(tmp.path, 'claude-cut-out'))).not.toContain('trace_SFT.json');
  });

  it('codex: a root cut mid-file converts what is intact without SFT; a root whose first line is cut keeps its place (named by its file) with its intact child', async () => {
    const home = codexCopy('codex-cut');
    const root = join(home, 'sessions', codexRoot);
    const text = readFileSync(root, 'utf8');
    writeFileSync(root, text.slice(0, Math.floor(text.length * 0.6)));
    const r = await roller('convert', '--harness', 'codex', '--native', home, '--out', join(tmp.path, 'codex-cut-out'));
    expect(r.stdout).toMatch(/SFT unavailable \(the main session is damaged \(sessions\/rollout-[^:]+\.jsonl:\d+: /);
    expect(r.stderr).toMatch(/roller convert: sessions\/rollout-.*\.jsonl:\d+: line not read/);

    const home2 = codexCopy('codex-head-cut');
    const root2 = join(home2, 'sessions', codexRoot);
    const lines = readFileSync(root2, 'utf8').split('\n');
    writeFileSync(root2, [lines[0]!.slice(0, 80), ...lines.slice(1)].join('\n'));
    const cut = await roller('convert', '--harness', 'codex', '--native', home2, '--out', join(tmp.path, 'codex-head-cut-out'));
    expect(cut.stderr).toContain(`roller convert: sessions/${codexRoot}:1: line not read`);
    const usage = readJson(join(tmp.path, 'codex-head-cut-out', 'usage.json'));
    expect(usage.participants.map((p: Json) => [p.role, p.native_id, p.status])).toEqual([
      ['root', '01a22b3b-143a-7721-b9f8-abb58f73e2e2', 'completed'],
      ['child', '01a22b3b-1941-7241-93cc-4715a620a477', 'completed'],
    ]);
    expect(usage.participants[1].tokens.output).toBeGreaterThan(0);
    expect(cut.stdout).toContain('SFT unavailable (the main session is damaged');
  });
});

describe('15. lock.json and info.json redact values that look like credentials, whatever their key', () => {
  it('sk-…, Bearer …, known token prefixes and long random tokens are redacted; ids, model names and paths are kept', () => {
    const config = {
      api_base: 'https://api.example.com/v1',
      model: 'claude-sonnet-4-5-20250929',
      extra_headers: { 'x-custom': 'Bearer abc.def.ghi12345', 'x-org': 'org-Qw8eR7tY6uI5oP4aS3dF2gH1' },
      // Built here so that no file holds a string shaped like a real key.
      default_query: { note: ['sk', 'ant', 'api03', 'abcdefghij0123456789'].join('-') },
      github: `ghp_${'0123456789abcdefghijABCDEFGHIJklmnop'}`,
      session: '123e4567-e89b-12d3-a456-426614174000',
      tasks: '/home/user/projects/roller-tasks.jsonl',
      temperature: 0.2,
    };
    const out = redactConfig(config) as Json;
    expect(out.extra_headers).toEqual({ 'x-custom': '<redacted>', 'x-org': '<redacted>' });
    expect(out.default_query.note).toBe('<redacted>');
    expect(out.github).toBe('<redacted>');
    expect([out.api_base, out.model, out.session, out.tasks, out.temperature]).toEqual(['https://api.example.com/v1', 'claude-sonnet-4-5-20250929', '123e4567-e89b-12d3-a456-426614174000', '/home/user/projects/roller-tasks.jsonl', 0.2]);
    for (const kept of ['gpt-5.1-codex-max', 'openai/gpt-oss-120b', 'my_project_directory_name_2024', 'scripted/default']) expect(looksLikeCredential(kept)).toBe(false);
  });
});
