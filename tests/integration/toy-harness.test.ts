/**
 * Adding a runnable harness is its folder and one registry line: the tests' toy harness (tests/support/toy-harness:
 * a CLI of its own and its adapter) is registered with the one line below, and then collect, verify and reprocess
 * run it on the scripted model like a shipped one — installed by npm from its folder, its calls recorded by the
 * proxy, attributed per id, its outputs validated.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, isRollerError } from '../../src/core/errors.js';
import { harnessAdapter, registerHarness, runnableHarnesses, verifiableHarnesses } from '../../src/harnesses/index.js';
import { collect } from '../../src/pipelines/collect/run.js';
import { reprocess } from '../../src/pipelines/reprocess/run.js';
import { validateRun } from '../../src/pipelines/validate-run.js';
import { verifyHarness } from '../../src/pipelines/verify.js';
import type { RunInfo, SampleInfo } from '../../src/schemas/index.js';
import { readJson, readJsonl } from '../support/collect-run.js';
import { toyAdapter } from '../support/toy-harness/adapter.js';
import { useTempDir } from '../support/temp-dir.js';
import { roller as rollerCli } from '../support/roller-cli.js';

const tmp = useTempDir('toy-harness');

beforeAll(() => {
  registerHarness(toyAdapter); // the one line
});

describe('a harness from its own folder and one registry line', () => {
  it('is runnable and verifiable', () => {
    expect(runnableHarnesses()).toContain('toy');
    expect(verifiableHarnesses()).toContain('toy');
  });

  it('roller collect runs it on the scripted model: every call recorded and attributed, outputs validated, SFT written', async () => {
    const tasks = join(tmp.path, 'tasks.jsonl');
    writeFileSync(tasks, [{ id: 'hello', prompt: '[HELLO] say hello' }, { id: 'write', prompt: '[WRITE] write hello.txt', followups: ['[HELLO] and now hello'] }].map((t) => JSON.stringify(t)).join('\n'));
    const notices: string[] = [];
    const { runDir, info } = await collect({ tasks, harness: 'toy', models: ['scripted/default'], output: join(tmp.path, 'runs'), runName: 'toy', captureCalls: true, captureDebug: 'full', cacheDir: join(tmp.path, 'cache'), onNotice: (m) => notices.push(m) });
    // A slow step says what it does: the CLI's install (once), before anything runs.
    expect(notices).toEqual(expect.arrayContaining([expect.stringMatching(/^installing .*cli from npm into .*toy-1\.0\.0 \(once: later runs reuse it\)$/), expect.stringMatching(/^installed roller-toy-harness@1\.0\.0 in \d+\.\d s$/)]));
    expect(info.summary).toMatchObject({ ok: 2, error: 0, timeout: 0 });
    expect(info.delegation).toEqual({ available: false, reason: 'the toy harness has no delegation tool' });
    expect(await validateRun(runDir)).toEqual([]);
    expect(readJsonl(join(runDir, 'sft.jsonl'))).toHaveLength(2);
    const write = info.samples.find((s) => s.task_id === 'write')!;
    const sample = readJson<SampleInfo>(join(runDir, write.path, 'info.json'));
    const manifest = readJson<Record<string, any>>(join(runDir, write.path, 'capture', 'attempt-0001', 'manifest.json'));
    expect(manifest).toMatchObject({ capture_status: 'complete', harness: { name: 'toy', version: harnessAdapter('toy').runner!.pin.version }, coverage: { status: 'verified' } });
    const calls = readJsonl(join(runDir, write.path, 'capture', 'attempt-0001', 'calls.jsonl'));
    // [WRITE]: the tool call and the answer after it; the follow-up continued the same session: one more call.
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.identity_status === 'attributed' && c.participant_id === calls[0]!.participant_id)).toBe(true);
    const actf = readJson<Record<string, any>>(join(runDir, write.path, 'trace_ACTF.json'));
    expect(actf.steps.map((s: Record<string, any>) => s.assistant_content.tool_calls.map((t: Record<string, any>) => t.name))).toEqual([['write'], [], []]);
    expect(sample.usage?.output).toBe(calls.reduce((a, c) => a + c.usage.normalized.output, 0));
  });

  it('roller reprocess rebuilds its run from the archives', async () => {
    const out = join(tmp.path, 'reprocessed');
    const report = await reprocess({ input: join(tmp.path, 'runs', 'toy'), output: out });
    expect(report.rows.map((r) => r.error?.message ?? r.status)).toEqual(['written', 'written']);
    expect(await validateRun(out)).toEqual([]);
    for (const f of ['sft.jsonl']) expect(readFileSync(join(out, f), 'utf8')).toBe(readFileSync(join(tmp.path, 'runs', 'toy', f), 'utf8'));
  });

  it('usage, view-capture and validate-capture take a run, a sample or a capture directory, or say which they want', async () => {
    const run = join(tmp.path, 'runs', 'toy');
    const row = readJson<RunInfo>(join(run, 'info.json')).samples[1]!;
    const sampleDir = join(run, row.path);
    const capture = join(sampleDir, 'capture', 'attempt-0001');
    const usage = await rollerCli('usage', sampleDir);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(new RegExp(`^${row.path} \\[ok\\] in \\d+ · cache write 0 · cache read \\d+ · out \\d+`));
    expect(usage.stdout).toMatch(/^run .*: 1 samples, /m);
    for (const dir of [capture, sampleDir, join(sampleDir, 'capture')]) {
      const view = await rollerCli('view-capture', dir);
      expect(view.code, view.stderr).toBe(0);
      expect(view.stdout).toContain('toy 1.0.0 · capture complete');
      expect((await rollerCli('validate-capture', dir)).stdout).toBe(`ok ${capture}\n`);
    }
    const all = await rollerCli('view-capture', run);
    expect(all.stdout.split('\n').filter((l) => l.startsWith('== '))).toHaveLength(2);
    const wrong = await rollerCli('usage', capture);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('is a capture attempt: roller usage takes a run or one of its samples');
    const nothing = await rollerCli('view-capture', tmp.path);
    expect(nothing.stderr).toMatch(/neither a run, a sample nor a capture directory of roller's .* \[ROLLER_FILE_NOT_FOUND\]\n$/);
  });

  it('a reprocess whose every sample fails says so: each an error row of the output run, and validate-run names them', async () => {
    const copy = join(tmp.path, 'no-raw');
    cpSync(join(tmp.path, 'runs', 'toy'), copy, { recursive: true });
    for (const row of readJson<RunInfo>(join(copy, 'info.json')).samples) rmSync(join(copy, row.path, 'capture', 'attempt-0001', 'raw'), { recursive: true });
    const out = join(tmp.path, 'out-no-raw');
    const report = await reprocess({ input: copy, output: out });
    expect(report).toMatchObject({ written: 0, errors: 2 });
    const info = readJson<RunInfo>(join(out, 'info.json'));
    expect(info.summary).toMatchObject({ ok: 0, error: 2, failed: 2 });
    expect(info.samples.map((s) => [s.status, s.error?.code])).toEqual([
      ['error', report.rows[0]!.error!.code],
      ['error', report.rows[1]!.error!.code],
    ]);
    const problems = await validateRun(out);
    expect(problems).toEqual(info.samples.map((s) => expect.stringMatching(new RegExp(`^${s.path}: no sample directory; the run records it as error \\(${s.error!.code}: not reprocessed: `))));
  });

  it("a run whose lock.json or info.json is cut short: reprocess and collect --resume name the file, with a typed error", async () => {
    const copy = join(tmp.path, 'damaged');
    cpSync(join(tmp.path, 'runs', 'toy'), copy, { recursive: true });
    const lock = readFileSync(join(copy, 'lock.json'), 'utf8');
    writeFileSync(join(copy, 'lock.json'), lock.slice(0, 200));
    const cut = (err: unknown) => isRollerError(err, ErrorCode.JSON_INVALID) && err.message.startsWith(`${join(copy, 'lock.json')} is not valid JSON`);
    expect(cut(await reprocess({ input: copy, output: join(tmp.path, 'out-damaged') }).catch((e: unknown) => e))).toBe(true);
    const tasks = join(tmp.path, 'tasks.jsonl');
    expect(cut(await collect({ tasks, harness: 'toy', models: ['scripted/default'], output: tmp.path, runName: 'damaged', resume: true, captureCalls: true, captureDebug: 'full', cacheDir: join(tmp.path, 'cache') }).catch((e: unknown) => e))).toBe(true);
    writeFileSync(join(copy, 'lock.json'), lock);
    writeFileSync(join(copy, 'info.json'), '{"schema":"roller.run-in');
    const info = await reprocess({ input: copy, output: join(tmp.path, 'out-damaged') }).catch((e: unknown) => e);
    expect(isRollerError(info, ErrorCode.JSON_INVALID) && info.message.startsWith(`${join(copy, 'info.json')} is not valid JSON`)).toBe(true);
  });

  it('roller verify runs its scenarios from its folder: each runnable one passes, the rest say why', async () => {
    const results = await verifyHarness('toy', { cacheDir: join(tmp.path, 'cache') });
    expect(results.map((r) => [r.scenario, r.status, r.reason])).toEqual([
      ['ordinary conversation', 'pass', ''],
      ['a tool call', 'pass', ''],
      ['a single sub-agent', 'not_applicable', 'the toy harness has no delegation tool'],
    ]);
    expect(existsSync(join(tmp.path, 'cache', 'toy-1.0.0', 'node_modules', '.bin', 'toy'))).toBe(true);
  });
});
