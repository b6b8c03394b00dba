import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessAdapter } from '../../src/harnesses/index.js';
import { VERIFIED_VERSIONS } from '../../src/harnesses/verified-versions.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import { roller } from '../support/roller-cli.js';

const tmp = useTempDir('cli-versions');
const VERSIONS = join(repoRoot, 'tests', 'fixtures', 'versions');


describe('roller and harness versions (bin/roller over dist/)', () => {
  it('harness versions prints the matrix: every verified version, its release and scenarios, the pinned one marked', async () => {
    const res = await roller('harness', 'versions', 'codex');
    expect(res.code).toBe(0);
    const rows = res.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^version\s+released\s+verified\s+a tool call \| /);
    expect(rows.slice(1).map((r) => r.split(/\s+/)[0])).toEqual(VERIFIED_VERSIONS.codex!.map((v) => v.version));
    expect(rows.find((r) => r.startsWith(`${harnessAdapter('codex').runner!.pin.version} `))).toMatch(/\(pinned\)$/);
    const json = JSON.parse((await roller('harness', 'versions', 'claude-code', '--json')).stdout) as unknown[];
    expect(json.length).toBeGreaterThanOrEqual(20);
    const none = await roller('harness', 'versions', 'nothing');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/nothing: no version matrix \(harnesses with one: claude-code, codex/);
  });

  it('harness install NAME@VERSION installs (or reuses) that release and prints its binary; a bad name is named', async () => {
    const pinned = harnessAdapter('codex').runner!.pin.version;
    const res = await roller('harness', 'install', `codex@${pinned}`);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toMatch(new RegExp(`codex-${pinned.replaceAll('.', '\\.')}/node_modules/\\.bin/codex$`));
    expect(res.stderr).toMatch(new RegExp(`(already installed|installed): @openai/codex@${pinned.replaceAll('.', '\\.')}`));
    const bad = await roller('harness', 'install', 'nothing@1.0.0');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('nothing: not a harness roller installs');
  }, 600_000);

  it("a release npm cannot install: npm's own words, and how to list the versions there are", async () => {
    // dsh's install takes only releases published before its --before date: 0.1.0-rc.6 came later.
    const res = await roller('harness', 'install', 'deepseek@0.1.0-rc.6', '--cache-dir', join(tmp.path, 'cache'));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/installing @deepseek-ai\/dsh@0\.1\.0-rc\.6 into .* failed \(npm: code ETARGET; notarget No matching version found for @deepseek-ai\/dsh@0\.1\.0-rc\.6/);
    expect(res.stderr).toContain('(npm view @deepseek-ai/dsh versions) [ROLLER_HARNESS_INSTALL_FAILED]');
  }, 300_000);

  it('collect refuses an unverified --harness-version before installing anything, and says how to verify it', async () => {
    const res = await roller('collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'codex', '--harness-version', '0.1.0', '--output', tmp.path, '--run-name', 'x');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('--harness-version 0.1.0: roller has not verified codex 0.1.0');
    expect(res.stderr).toContain('roller verify --harness codex --versions 0.1.0');
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('collect refuses --thinking with a Claude Code release that takes no --effort', async () => {
    const res = await roller('collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--harness-version', '2.1.36', '--thinking', 'high', '--output', tmp.path, '--run-name', 'y');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('--thinking high: claude-code 2.1.36 takes no reasoning level (from 2.1.50 on)');
  });

  it('convert: a rollout that yields no token count exits 1 naming it (never zeros); --allow-partial accepts it; --wire counts it', async () => {
    const dir = join(VERSIONS, 'codex', '0.20.0', 'a-tool-call');
    const strict = await roller('convert', '--harness', 'codex', '--native', join(dir, 'native'), '--out', join(tmp.path, 'c1'));
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/error: thread:[0-9a-f-]+: tokens unknown: .*before 0\.34/);
    expect(strict.stderr).toContain('[ROLLER_TOKENS_UNKNOWN]');
    const partial = await roller('convert', '--harness', 'codex', '--native', join(dir, 'native'), '--out', join(tmp.path, 'c2'), '--allow-partial');
    expect(partial.code).toBe(0);
    const usage = JSON.parse(await readFile(join(tmp.path, 'c2', 'usage.json'), 'utf8')) as { participants: { tokens_status?: string }[]; partial: { tokens_unknown: string[] } };
    expect(usage.participants[0]!.tokens_status).toBe('unknown');
    expect(usage.partial.tokens_unknown).toHaveLength(1);
    const wired = await roller('convert', '--harness', 'codex', '--native', join(dir, 'native'), '--out', join(tmp.path, 'c3'), '--wire', join(dir, 'calls.jsonl'));
    expect(wired.code).toBe(0);
    expect(wired.stderr).not.toContain('tokens unknown');
  });
});
