import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../src/core/errors.js';
import { lockDifferences, redactConfig, redactCredentialValues } from '../../src/pipelines/collect/lock.js';
import { resolveModel } from '../../src/pipelines/collect/models.js';
import { copyResults } from '../../src/pipelines/collect/results.js';
import { loadTasks } from '../../src/pipelines/collect/tasks.js';
import { reportedTotals } from '../../src/harnesses/claude-code/reported.js';
import { LOCK_SCHEMA, type Lock } from '../../src/schemas/lock.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('collect-unit');

describe('collect: tasks', () => {
  it('names file and line of every bad task, refuses duplicate ids, and runs nothing', async () => {
    const f = join(tmp.path, 'bad.jsonl');
    await writeFile(f, ['{"id":"a","prompt":"x"}', '{"id":"a","prompt":"y"}', 'not json', '{"id":"../up","prompt":"z"}', '{"id":"b","prompt":"p","extra":1}'].join('\n'));
    const err = await loadTasks(f).catch((e: unknown) => e);
    expect(isRollerError(err)).toBe(true);
    const text = (err as Error).message;
    expect(text).toContain(`${f}:2: task id 'a' is already used on line 1`);
    expect(text).toContain(`${f}:3: not JSON`);
    expect(text).toMatch(new RegExp(`${f}:4: \\$\\.id: `));
    expect(text).toMatch(new RegExp(`${f}:5: .*extra`));
  });

  it('the bundle digest follows content, not formatting', async () => {
    const a = join(tmp.path, 'a.jsonl');
    const b = join(tmp.path, 'b.jsonl');
    await writeFile(a, '{"id":"t","prompt":"p","files":{"x":"1"}}\n');
    await writeFile(b, '{ "files": {"x": "1"}, "prompt": "p", "id": "t" }\n\n');
    expect((await loadTasks(a)).digest).toBe((await loadTasks(b)).digest);
    await writeFile(b, '{"id":"t","prompt":"p2"}\n');
    expect((await loadTasks(a)).digest).not.toBe((await loadTasks(b)).digest);
  });
});

describe('collect: lock', () => {
  it('never keeps a credential: keys redacted, URL userinfo and fragment removed, sensitive query values replaced', () => {
    const out = JSON.stringify(
      redactConfig({ api_base: 'https://user:pw@api.example.com/v1?api-version=2026-01&key=abc#frag', api_key: 'sk-live-123', api_key_env: 'MY_KEY', headers: { Authorization: 'Bearer t' }, temperature: 0 }),
    );
    expect(out).not.toMatch(/sk-live-123|Bearer t|user:pw|abc|frag/);
    expect(out).toContain('api-version=2026-01');
    expect(out).toContain('"api_key_env":"MY_KEY"'); // the name of the variable, not its value
    expect(out).toContain('"temperature":0');
  });

  it('lists where two locks differ, ignoring when and by which roller they were written', () => {
    const base: Lock = {
      schema: LOCK_SCHEMA, roller_version: '0.1.0', created_at: '2026-11-30T00:00:00.000Z', requests: [{ index: 0, task_id: 't', model: 'scripted/default' }],
      task_bundle_digest: `sha256:${'0'.repeat(64)}`, harness: { name: 'claude-code', version: '2.1.332' }, models: {}, image_id: null, timeout_s: 600,
      options: { thinking: null, keep_thinking: true, wire_trace: 'actf', cache_trace: false, capture_calls: true },
    };
    expect(lockDifferences(base, { ...base, created_at: '2027-01-01T00:00:00.000Z', roller_version: '0.2.0' })).toEqual([]);
    expect(lockDifferences(base, { ...base, requests: [{ index: 0, task_id: 'u', model: 'scripted/default' }], options: { ...base.options, wire_trace: 'full' } })).toEqual([
      '$.requests[0].task_id: "t" -> "u"',
      '$.options.wire_trace: "actf" -> "full"',
    ]);
  });
});

describe('collect: models', () => {
  it('scripted models are embedded; API keys come only from the variable the config names', () => {
    expect(resolveModel('scripted/default', { models: {} })).toMatchObject({ kind: 'scripted' });
    expect(() => resolveModel('scripted/nope', { models: {} })).toThrow(/no embedded script 'nope'/);
    const config = { models: { 'acme/m1': { api_base: 'https://api.acme.test', api_key_env: 'ACME_KEY' } } };
    expect(() => resolveModel('acme/m1', config, {})).toThrow(/ACME_KEY named by --model-config is not set/);
    expect(resolveModel('acme/m1', config, { ACME_KEY: 'k' })).toMatchObject({ kind: 'api', apiBase: 'https://api.acme.test', apiKey: 'k', modelName: 'm1' });
    expect(() => resolveModel('acme/other', config, {})).toThrow(/not in --model-config/);
  });
});

describe('collect: results/', () => {
  it('copies ordinary files with their digests, refuses links without following them', async () => {
    const work = join(tmp.path, 'work');
    await mkdir(join(work, 'out', 'sub'), { recursive: true });
    await writeFile(join(work, 'out', 'a.json'), '{}');
    await writeFile(join(work, 'out', 'sub', 'b.txt'), 'bee');
    await symlink('/etc/hostname', join(work, 'out', 'link'));
    await symlink(join(work, 'out', 'sub'), join(work, 'out', 'dirlink'));
    const r = await copyResults(work, ['out'], join(tmp.path, 'results'));
    expect(r.files.map((f) => [f.path, f.size, f.mime])).toEqual([
      ['out/a.json', 2, 'application/json'],
      ['out/sub/b.txt', 3, 'text/plain'],
    ]);
    expect(r.refused.sort()).toEqual(['out/dirlink: a symbolic link', 'out/link: a symbolic link']);
  });

  it('a directory declared twice or inside another declared one is copied once, not refused as a clash', async () => {
    const work = join(tmp.path, 'overlap-work');
    await mkdir(join(work, 'out', 'sub'), { recursive: true });
    await writeFile(join(work, 'out', 'a.txt'), 'a');
    await writeFile(join(work, 'out', 'sub', 'b.txt'), 'b');
    await writeFile(join(work, 'top.txt'), 't');
    const r = await copyResults(work, ['out', './out/', 'out/sub'], join(tmp.path, 'overlap-results'));
    expect([r.files.map((f) => f.path), r.refused, r.failed]).toEqual([['out/a.txt', 'out/sub/b.txt'], [], []]);
    const all = await copyResults(work, ['out/sub', '.'], join(tmp.path, 'overlap-all'));
    expect(all.files.map((f) => f.path)).toEqual(['out/a.txt', 'out/sub/b.txt', 'top.txt']);
  });
});

describe('Claude Code result events of consecutive prompts (seeds/004: session delta)', () => {
  const result = (session: string, cost: number, input: number, output: number, query: number) => ({
    session_id: session,
    total_cost_usd: cost,
    usage: { input_tokens: query, output_tokens: 1 },
    modelUsage: { m: { inputTokens: input, outputTokens: output, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 } },
  });

  it("each later prompt of the same session reports its own figures; the running total is never counted twice", () => {
    const r = reportedTotals([result('S', 0.1, 100, 10, 100), result('S', 0.25, 260, 25, 160)]) as Record<string, any>;
    expect(r.prompts.map((p: Record<string, unknown>) => [p.cost_basis, p.cost_usd, p.session_cumulative_cost_usd])).toEqual([
      ['as_reported', 0.1, 0.1],
      ['session_delta', 0.15, 0.25],
    ]);
    expect(r.all_agents).toEqual({ input: 260, cache_creation: 0, cache_read: 0, output: 25 });
    expect(r.main_agent).toMatchObject({ input: 260, output: 2 });
    expect(r.total_cost_usd).toBe(0.25);
  });

  it('never subtracts across sessions, nor when the counters restarted', () => {
    const across = reportedTotals([result('S', 0.1, 100, 10, 100), result('T', 0.2, 200, 20, 200)]) as Record<string, any>;
    expect(across.prompts.map((p: Record<string, unknown>) => p.cost_basis)).toEqual(['as_reported', 'as_reported']);
    expect(across.total_cost_usd).toBeCloseTo(0.3, 12);
    const restarted = reportedTotals([result('S', 0.3, 300, 30, 300), result('S', 0.1, 100, 10, 100)]) as Record<string, any>;
    expect(restarted.prompts[1]).toMatchObject({ cost_basis: 'as_reported', cost_usd: 0.1 });
    expect(restarted.all_agents).toMatchObject({ input: 400, output: 40 });
  });
});

describe('info.json checkpoints (seeds/003 §5.2)', async () => {
  const { RunInfoCheckpoints } = await import('../../src/pipelines/collect/checkpoints.js');
  it('the first result, every 25 more, results 30 s apart, and at once on an interrupt; writes never overlap', async () => {
    let clock = 0;
    let out = 0;
    let overlapped = false;
    const writes: number[] = [];
    const cp = new RunInfoCheckpoints(async () => {
      if (out > 0) overlapped = true;
      out++;
      await new Promise((r) => setImmediate(r));
      writes.push(clock);
      out--;
    }, () => clock);
    const results = async (n: number, everyMs: number) => {
      for (let i = 0; i < n; i++) {
        clock += everyMs;
        await cp.result();
      }
    };
    await results(1, 1000); // the first result
    await results(24, 1000); // 24 more: not yet
    expect(writes).toEqual([1000]);
    await results(1, 1000); // the 25th since the last write
    expect(writes).toEqual([1000, 26_000]);
    await results(1, 30_000); // 30 s after the previous result
    expect(writes).toEqual([1000, 26_000, 56_000]);
    await results(3, 29_000); // results less than 30 s apart: nothing
    expect(writes).toHaveLength(3);
    // An interrupt writes at once, even while a result's write is out.
    const a = cp.force();
    const b = cp.interrupted();
    await Promise.all([a, b]);
    expect(writes).toHaveLength(5);
    expect(overlapped).toBe(false);
  });
});

describe('a harness trace kept in a sample (OpenClaw cache trace)', () => {
  it('credential values redacted by key and by token prefix; identity keys, digests and text kept', () => {
    const digest = 'a3f5c2e1b9d8470612ef34ab56cd78ef90a1b2c3d4e5f60718293a4b5c6d7e8f';
    const event = {
      sessionKey: 'agent:main:main',
      options: { apiKey: 'not-shown-1', headers: { authorization: 'Bearer abcdefgh12345678' }, baseUrl: 'http://u:p@127.0.0.1:9/v1' },
      messageFingerprints: [digest],
      prompt: 'read notes.txt',
      note: 'sk-live-0123456789abcdef',
    };
    expect(redactCredentialValues(event)).toEqual({
      sessionKey: 'agent:main:main',
      options: { apiKey: '<redacted>', headers: { authorization: '<redacted>' }, baseUrl: 'http://127.0.0.1:9/v1' },
      messageFingerprints: [digest],
      prompt: 'read notes.txt',
      note: '<redacted>',
    });
  });
});
