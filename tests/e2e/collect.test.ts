/**
 * `roller collect` as a user runs it: the real CLIs (pinned, installed by roller), the embedded scripted
 * model, the example tasks. Each run directory must validate as a whole (`roller validate-run`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunInfo } from '../../src/schemas/index.js';
import { collectRuns, DUMMY_KEY, expectSubagentRecords, filesUnder, info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { wireProtocol } from '../../src/transforms/protocols/index.js';
import { runChecks } from '../support/run-checks.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import { openRun } from '../../src/pipelines/run-reader.js';

type Json = Record<string, any>;
const tmp = useTempDir('collect');
const { tasksFile } = collectRuns(tmp);
const { expectReprocessReproduces, expectAtifExport } = runChecks(tmp);

describe('roller collect (real CLIs, embedded scripted model, offline)', () => {
  it('claude-code: the example tasks give a complete run; --resume reuses it; a changed option stops a resume before anything runs', async () => {
    const out = join(tmp.path, 'runs');
    const first = await roller(['collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--output', out, '--run-name', 'demo']);
    expect(first.code, first.stderr).toBe(0);
    const run = join(out, 'demo');
    expect(first.stdout.trim()).toBe(run);
    const validated = await roller(['validate-run', run]);
    expect(validated.code, validated.stdout).toBe(0);

    const i = info(run);
    expect(i).toMatchObject({ state: 'finished', summary: { ok: 3, error: 0, timeout: 0, skipped: 0 }, progress: { total: 3, processed: 3, pending: 0 } });
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    const rows = i.samples;
    // The write task's deliverable, with its digest; the delegation's sub-agent, relations and coverage.
    const write = sample(run, rows[1]!);
    expect(write.results).toEqual([expect.objectContaining({ path: 'hello.txt', size: 3, mime: 'text/plain' })]);
    expect(readFileSync(join(run, rows[1]!.path, 'results', 'hello.txt'), 'utf8')).toBe('hi\n');
    const delegate = sample(run, rows[2]!);
    const participants = delegate.runtime.participants as { role: string }[];
    expect(participants.map((p) => p.role)).toEqual(['root', 'child']);
    // The scripted model is no real model: no cost, though Claude Code priced it as the model it names (kept apart).
    expect(delegate.usage).toMatchObject({ cost_usd: 0, priced_cost_usd: 0, cost_source: 'scripted' });
    for (const p of participants) expect(p).toMatchObject({ cost_usd: 0, cost_source: 'scripted' });
    expect((delegate.runtime.harness_reported as { total_cost_usd: number }).total_cost_usd).toBeGreaterThan(0);
    expect((await roller(['usage', run])).stdout).toMatch(/no cost \(the scripted model\)/);
    const capture = join(run, rows[2]!.path, 'capture', 'attempt-0001');
    const manifest = readJson<{ capture_status: string; coverage: { status: string } }>(join(capture, 'manifest.json'));
    expect(manifest).toMatchObject({ capture_status: 'complete', coverage: { status: 'verified' } });
    const relations = readJsonl(join(capture, 'relations.jsonl')).map((x) => x.type as string);
    expect(relations).toEqual(expect.arrayContaining(['spawn', 'result_delivered', 'child_completed', 'result_in_context']));
    // The sub-agent is training data of its own: its record's system prompt and tools are what its first request sent
    // (Claude Code's sidechain keeps neither), its messages its own turns, ending on its report.
    const [record] = expectSubagentRecords(run);
    const child = (participants as Json[]).find((p) => p.role === 'child')!;
    const firstChildCall = readJsonl(join(capture, 'calls.jsonl')).find((c) => c.participant_id === child.participant)!;
    const sent = wireProtocol('anthropic-messages')!.systemAndTools(firstChildCall.context as Json);
    expect(record!.messages[0]).toEqual({ role: 'system', content: sent.system });
    expect(record!.tools).toEqual(sent.tools);
    expect(record!.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('[SUB:A] Read the file notes.txt') });
    expect(record!.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('BLUEBIRD') });
    // Ids embed a random scope per capture (seeds/000): every sample's differs; relation ids carry their capture's.
    const scopes = rows.map((row) => readJson<{ capture_scope: string }>(join(run, row.path, 'capture', 'attempt-0001', 'manifest.json')).capture_scope);
    expect(new Set(scopes).size).toBe(3);
    rows.forEach((row, k) => {
      for (const c of readJsonl(join(run, row.path, 'capture', 'attempt-0001', 'calls.jsonl'))) expect(c.call_id).toMatch(new RegExp(`^c-${scopes[k]}-\\d+$`));
    });
    const relationRecords = readJsonl(join(capture, 'relations.jsonl'));
    for (const x of relationRecords) expect(x.relation_id).toMatch(new RegExp(`^r-${scopes[2]}-\\d+$`));
    // raw/ is not kept for an ok sample (capture-debug on-error): native evidence keeps its source, retained false.
    expect(existsSync(join(capture, 'raw'))).toBe(false);
    const native = relationRecords.flatMap((x) => x.evidence as Json[]).filter((e) => e.source !== 'calls.jsonl');
    expect(native.length).toBeGreaterThan(0);
    for (const e of native) expect([e.retained, typeof e.source]).toEqual([false, 'string']);
    // No credential value in any file of the run.
    for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);

    // roller usage: the delegation's tree (the child under the root, spawned by the Agent call), and totals that count
    // each participant once — equal to the run's own totals.
    const usage = JSON.parse((await roller(['usage', run, '--json'])).stdout) as { samples: { tree: { role: string; children: { role: string; spawn_tool_call_id: string }[] }[]; totals: Json }[]; totals: Json };
    expect(usage.samples[2]!.tree.map((n) => [n.role, n.children.map((c) => c.role)])).toEqual([['root', ['child']]]);
    expect(usage.samples[2]!.tree[0]!.children[0]!.spawn_tool_call_id).toMatch(/^toolu_/);
    expect(usage.totals).toMatchObject({ input: i.usage.input, cache_read: i.usage.cached_input, cache_creation: i.usage.cache_creation, output: i.usage.output });
    // ... and they add up to what Claude Code itself reported (result.usage for the main agent, modelUsage for all agents).
    for (const s of usage.samples as unknown as { reconciliation: { main_agent_agrees: boolean; all_agents_agree: boolean; differences: string[] } }[]) {
      expect(s.reconciliation).toMatchObject({ main_agent_agrees: true, all_agents_agree: true, differences: [] });
    }

    // roller export: one ATIF trajectory per sample, each valid under Harbor's validator rules.
    const exported = await roller(['export', run]);
    expect(exported.code, exported.stderr).toBe(0);
    const trajectories = filesUnder(join(run, 'atif')).filter((f) => f.endsWith('trajectory.json'));
    expect(trajectories).toHaveLength(3);
    expect((await roller(['validate', '--schema', 'atif', ...trajectories])).code).toBe(0);
    // The sub-agent is embedded, and the parent's spawning call result points at it.
    const delegated = readJson<Json>(trajectories.find((f) => f.includes('0002_delegate'))!);
    expect(delegated.subagent_trajectories).toHaveLength(1);
    const refs = (delegated.steps as Json[]).flatMap((st) => ((st.observation?.results ?? []) as Json[]).flatMap((r) => r.subagent_trajectory_ref ?? []));
    expect(refs).toEqual([{ trajectory_id: delegated.subagent_trajectories[0].trajectory_id }]);

    // The library's run reader: every sample in order, its info.json checked, its files on demand.
    const opened = await openRun(run);
    const read: { participants: number; calls: number; relations: number; actf: boolean; sft: boolean }[] = [];
    for await (const s of opened.samples()) {
      let calls = 0;
      for await (const _ of s.calls()) calls++;
      read.push({ participants: s.participants.length, calls, relations: (await s.relations()).length, actf: (await s.actf()) !== null, sft: (await s.sft()) !== null });
    }
    expect(read.map((r) => r.participants)).toEqual([1, 1, 2]);
    expect(read.every((r) => r.calls > 0 && r.actf && r.sft)).toBe(true);
    expect(read[2]!.relations).toBe(relationRecords.length);
    expect(opened.lock?.harness).toBeDefined();
    // A sample directory where a run is expected: said, with the run directory to pass instead (no stack trace).
    await expect(openRun(join(run, rows[0]!.path))).rejects.toMatchObject({ code: 'ROLLER_INVALID_OPTIONS', message: expect.stringContaining('is a sample directory') });
    // roller usage takes a sample too: that sample alone; a capture attempt is refused, naming what it takes.
    const one = await roller(['usage', join(run, rows[0]!.path)]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^run .*: 1 samples, /m);
    const wrongDir = await roller(['usage', join(run, rows[0]!.path, 'capture', 'attempt-0001')]);
    expect([wrongDir.code, wrongDir.stderr]).toEqual([2, expect.stringMatching(/^roller: .* is a capture attempt: roller usage takes a run or one of its samples/)]);

    const sftBefore = readFileSync(join(run, 'sft.jsonl'));
    // A sample written before an audit existed (its model_identity_audit taken out): a resume reuses it as it is.
    const helloInfo = join(run, rows[0]!.path, 'info.json');
    const { model_identity_audit: _audit, ...olderRuntime } = sample(run, rows[0]!).runtime as Json;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(helloInfo, JSON.stringify({ ...sample(run, rows[0]!), runtime: olderRuntime }, null, 2));
    const olderBytes = readFileSync(helloInfo);
    const again = await roller(['collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--output', out, '--run-name', 'demo', '--resume']);
    expect(again.code, again.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 0, skipped: 3 });
    expect(readFileSync(join(run, 'sft.jsonl')).equals(sftBefore)).toBe(true);
    expect(readFileSync(helloInfo).equals(olderBytes)).toBe(true); // no audit backfilled (seeds/003)

    const infoBefore = readFileSync(join(run, 'info.json'));
    const changed = await roller(['collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--output', out, '--run-name', 'demo', '--resume', '--timeout', '100', '--no-keep-thinking']);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain('$.timeout_s: 600 -> 100');
    expect(changed.stderr).toContain('$.options.keep_thinking: true -> false');
    expect(readFileSync(join(run, 'info.json')).equals(infoBefore)).toBe(true);
  }, 10 * 60_000);

  it('claude-code: a sample that hangs once succeeds on its retry; a symbolic link in the output makes an error with the safe files copied', async () => {
    const tasks = await tasksFile('retry-tasks.jsonl', [
        { id: 'stall-once', prompt: '[STALL-ONCE] Answer when you can.', timeout_s: 8 },
        { id: 'links', prompt: '[SYMLINK] Write out/safe.txt and a link.', output_dirs: ['out'] },
    ]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'retry', '--capture-debug', 'full', '--retries', '1', '--collect-path', 'out/safe.txt']);
    expect(r.code).toBe(1); // a failed sample
    const run = join(out, 'retry');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const [stall, links] = info(run).samples.map((row) => sample(run, row));
    expect(stall!.status).toBe('ok');
    expect(stall!.attempts.map((a) => a.status)).toEqual(['timeout', 'ok']);
    expect(links!.status).toBe('error');
    expect(links!.error?.message).toContain('out/link: a symbolic link');
    expect(links!.attempts).toHaveLength(2);
    const linksDir = join(run, info(run).samples[1]!.path);
    expect(readFileSync(join(linksDir, 'results', 'out', 'safe.txt'), 'utf8')).toBe('safe\n');
    expect(readFileSync(join(linksDir, 'results', 'legacy', 'out', 'safe.txt'), 'utf8')).toBe('safe\n'); // --collect-path
    expect(links!.results.map((f) => f.path).sort()).toEqual(['legacy/out/safe.txt', 'out/safe.txt']);
    expect(existsSync(join(linksDir, 'results', 'out', 'link'))).toBe(false);
    expect(existsSync(join(linksDir, 'trace_SFT.json'))).toBe(false); // failed samples keep evidence, not SFT
    expect(readdirSync(join(linksDir, 'rollout')).sort()).toEqual(['claude-code-stderr.attempt-1.log', 'claude-code-stderr.attempt-2.log', 'claude-code-stdout.attempt-1.log', 'claude-code-stdout.attempt-2.log']);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    await expectReprocessReproduces(run);
    await expectAtifExport(run);
  }, 10 * 60_000);

  it('claude-code: Ctrl-C cancels queued samples and lets the running one finish; --resume reuses what finished and runs the rest', async () => {
    const tasks = await tasksFile('interrupt-tasks.jsonl', [
        { id: 'first', prompt: '[HELLO] one' },
        { id: 'slow', prompt: '[STALL-ONCE] two', timeout_s: 6 },
        { id: 'third', prompt: '[HELLO] three' },
    ]);
    const out = join(tmp.path, 'runs');
    let sent = false;
    let signalAt = 0;
    // info.json as it stands while "slow" still runs after the signal: the checkpoint the interrupt forces.
    let atInterrupt: RunInfo | undefined;
    const poll = setInterval(() => {
      if (!signalAt || atInterrupt) return;
      const now = info(join(out, 'interrupt'));
      if (Date.parse(now.updated_at) >= signalAt) atInterrupt = now;
    }, 25);
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'interrupt'], {
      onStderr: (text, child) => {
        if (!sent && text.includes('started 1_slow')) {
          sent = true;
          signalAt = Date.now();
          child.kill('SIGINT'); // while "slow" is running
        }
      },
    });
    clearInterval(poll);
    expect(r.stderr).toContain('interrupted');
    expect([atInterrupt?.state, atInterrupt?.progress.processed]).toEqual(['running', 1]);
    const run = join(out, 'interrupt');
    const stopped = info(run);
    expect(stopped.state).toBe('interrupted');
    expect(stopped.samples.map((s) => [s.task_id, s.status])).toEqual([
      ['first', 'ok'],
      ['slow', 'timeout'],
    ]);
    expect(stopped.progress).toEqual({ total: 3, processed: 2, pending: 1 });
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1); // the partial training set

    // --retries is not a trajectory-semantic option: a resume may add it (the rerun model stalls once more).
    const resumed = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'interrupt', '--resume', '--retries', '1']);
    const done = info(run);
    expect(done.state).toBe('finished');
    expect(done.samples.map((s) => [s.task_id, s.status])).toEqual([
      ['first', 'skipped'],
      ['slow', 'ok'], // rerun: its first attempt hangs again, the retry is answered
      ['third', 'ok'],
    ]);
    expect(resumed.code).toBe(0);
    expect((await roller(['validate-run', run])).code).toBe(0);
    expect(statSync(join(run, 'sft.jsonl')).size).toBeGreaterThan(0);
  }, 10 * 60_000);

  it.each(['v1', 'v2'])("codex (multi_agent %s) on the demo tasks: the root waits for its sub-agent, whose result is the SFT's answer", async (version) => {
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--tasks', join(repoRoot, 'examples', 'tasks', 'demo.jsonl'), '--harness', 'codex', '--codex-multi-agent', version, '--output', out, '--run-name', `codex-demo-${version}`]);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, `codex-demo-${version}`);
    const delegate = info(run).samples.find((s) => s.task_id === 'delegate')!;
    const s = sample(run, delegate);
    expect((s.runtime.participants as { role: string; status: string }[]).map((p) => [p.role, p.status])).toEqual([['root', 'completed'], ['child', 'completed']]);
    expect(s.runtime.delegation_audit).toEqual({ status: 'finished', not_completed: [] });
    expect(s.runtime.sft_eligibility).toEqual({ eligible: true, reason: null });
    const answer = (readJson<Json>(join(run, delegate.path, 'trace_SFT.json')).messages as Json[]).filter((m) => m.role === 'assistant').at(-1)!.content as string;
    expect(answer).toMatch(/^Done\. Sub-agent report: .*The secret word is BLUEBIRD\./);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
    expect(info(run).summary.training?.subagents_not_completed).toBeUndefined();
    // Without --capture-calls the child's steps cannot be checked against its calls: no record, and said so.
    expect(expectSubagentRecords(run)).toEqual([]);
    expect(s.runtime.subagent_sft).toEqual([{ participant: expect.stringMatching(/^thread:/), status: 'unavailable', reason: 'no captured calls to check its steps against (collect with --capture-calls)' }]);
    // One vocabulary for token kinds: the progress line says them as roller usage does.
    expect(r.stderr).toMatch(/\] ok +0_hello \(scripted\/default\) 1 requests, in \d+ · cache write \d+ · cache read \d+ · out \d+/);
  }, 10 * 60_000);

  it("codex: a root that answers from the spawn's acknowledgement cuts its sub-agent off: named on the sample's line, and not training data", async () => {
    const tasks = await tasksFile('no-wait-tasks.jsonl', [{ id: 'no-wait', prompt: '[MAIN:no-wait] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'The secret word is BLUEBIRD.\n' } }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'codex', '--output', out, '--run-name', 'codex-no-wait']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'codex-no-wait');
    const row = info(run).samples[0]!;
    const s = sample(run, row);
    const child = (s.runtime.participants as { role: string; participant: string; status: string }[]).find((p) => p.role === 'child')!;
    expect([row.status, child.status]).toEqual(['ok', 'failed']);
    expect(r.stderr).toMatch(new RegExp(`\\] ok +0_no-wait .*\\n  sub-agent ${child.participant} failed \\(sessions/[^)]*#turn_aborted\\); the sample's own status is ok\\n`));
    expect(s.runtime.delegation_audit).toMatchObject({ status: 'unfinished', not_completed: [{ participant: child.participant, status: 'failed', status_source: expect.stringMatching(/#turn_aborted$/), unfinished: true }] });
    expect(s.runtime.sft_eligibility).toEqual({ eligible: false, reason: expect.stringMatching(new RegExp(`^incomplete_delegation: sub-agent ${child.participant} is failed \\(sessions/.*#turn_aborted\\): the answer was not built on its result$`)) });
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
    expect(info(run).summary.training).toMatchObject({ subagents_not_completed: 1, excluded: { incomplete_delegation: 1 } });
    expect(r.stderr).toContain("roller collect: 1 samples answered without a sub-agent's result (it never finished, or was cut off): excluded from sft.jsonl");
  }, 10 * 60_000);

  it('codex: a run with a sub-agent (multi_agent v1) validates', async () => {
    const tasks = await tasksFile('codex-tasks.jsonl', [
        { id: 'hello', prompt: '[HELLO] Say hello.' },
        { id: 'delegate', prompt: '[MAIN:wait] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'The secret word is BLUEBIRD.\n' } },
    ]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'codex', '--output', out, '--run-name', 'codex', '--capture-debug', 'full', '--thinking', 'low']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'codex');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const rows = info(run).samples;
    expect(rows.map((s) => s.status)).toEqual(['ok', 'ok']);
    expect((sample(run, rows[1]!).runtime.participants as { role: string }[]).map((p) => p.role)).toEqual(['root', 'child']);
    // --thinking low reached every request the harness sent (model_reasoning_effort -> reasoning.effort).
    for (const row of rows) expect(sample(run, row).runtime.wire_effort_audit).toMatchObject({ status: 'matched', requested: 'low' });
    expect(readJson<{ options: { thinking: string } }>(join(run, 'lock.json')).options.thinking).toBe('low');
    // Codex keeps every request's tool list (tools_capture.jsonl) in the sample, and web search is off: no request offers it.
    for (const row of rows) {
      const snapshots = readJsonl(join(run, row.path, 'tools_capture.jsonl'));
      expect(snapshots.length).toBeGreaterThan(0);
      const offered = snapshots.flatMap((x) => ((x.tools ?? []) as Json[]).map((t) => String(t.type === 'function' ? t.name : t.type)));
      expect(offered).toContain('exec_command');
      expect(offered.some((t) => /web_search/.test(t))).toBe(false);
    }
    for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);
    await expectReprocessReproduces(run);
    await expectAtifExport(run);
  }, 10 * 60_000);
});

describe('roller collect --resume on older runs', () => {

  it('a run without lock.json is recaptured once before anything is reused; a sample whose main ACTF holds sub-agent steps stops a resume', async () => {
    const tasks = await tasksFile('old-tasks.jsonl', [
        { id: 'hello', prompt: '[HELLO] hi' },
        { id: 'delegate', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } },
    ]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'older'];
    expect((await roller(args)).code).toBe(0);
    const run = join(out, 'older');
    const { rmSync, writeFileSync } = await import('node:fs');

    // An older run: no lock. Without --resume it is refused; with it, every sample runs again (none reused).
    rmSync(join(run, 'lock.json'));
    const refused = await roller(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('without lock.json');
    expect((await roller([...args, '--resume'])).code).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 2, skipped: 0 });
    expect(existsSync(join(run, '.migration.json'))).toBe(false); // recapture finished: reuse allowed again
    expect((await roller([...args, '--resume'])).code).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 0, skipped: 2 });

    // An older roller's sample: the main ACTF holds a sub-agent's message.
    const row = info(run).samples[1]!;
    const dir = join(run, row.path);
    const sidechain = readFileSync(join(dir, 'trace.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"isSidechain":true'))
      .map((l) => JSON.parse(l) as { type: string; message?: { id?: string } })
      .find((r) => r.type === 'assistant')!.message!.id!;
    const actf = readJson<{ steps: { native_ids: { message_id: string } }[] }>(join(dir, 'trace_ACTF.json'));
    actf.steps[1]!.native_ids.message_id = sidechain;
    writeFileSync(join(dir, 'trace_ACTF.json'), JSON.stringify(actf));
    const mixed = await roller([...args, '--resume']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('holds sub-agent steps');
    expect(mixed.stderr).toContain(dir);
  }, 10 * 60_000);
});

describe('roller collect after SIGKILL', () => {
  it('info.json is the last complete snapshot, and --resume finishes the run', async () => {
    const tasks = await tasksFile('kill-tasks.jsonl', [
        { id: 'first', prompt: '[HELLO] one' },
        { id: 'slow', prompt: '[STALL-ONCE] two', timeout_s: 6 },
        { id: 'third', prompt: '[HELLO] three' },
    ]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'killed'];
    let killed = false;
    await roller(args, {
      onStderr: (text, child) => {
        if (!killed && text.includes('started 1_slow')) {
          killed = true;
          child.kill('SIGKILL'); // no handler runs: nothing but the checkpoints already on disk
        }
      },
    });
    expect(killed).toBe(true);
    const run = join(out, 'killed');
    expect((await roller(['validate', '--schema', 'run-info', join(run, 'info.json')])).code).toBe(0);
    const snapshot = info(run);
    expect(snapshot.state).toBe('running');
    expect(snapshot.samples.map((s) => [s.task_id, s.status])).toEqual([['first', 'ok']]);

    const resumed = await roller([...args, '--resume', '--retries', '1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).samples.map((s) => [s.task_id, s.status])).toEqual([
      ['first', 'skipped'],
      ['slow', 'ok'],
      ['third', 'ok'],
    ]);
    expect((await roller(['validate-run', run])).code).toBe(0);
  }, 10 * 60_000);
});
