/**
 * `roller collect` across one session: a real compaction, follow-up prompts, a sub-agent resumed by a new
 * delegation. The real CLIs on the embedded scripted model.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRuns, DUMMY_KEY, filesUnder, info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { runChecks } from '../support/run-checks.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('collect-sessions');
const { tasksFile, collectValidRun } = collectRuns(tmp);
const { expectReprocessReproduces, expectAtifExport } = runChecks(tmp);

describe('roller collect through a real compaction (Claude Code, context window made small by the model config)', () => {
  it('the main context compacts once: two segments rebuilt from the actual requests, targets exactly the calls’ outputs, the summary call attributed', async () => {
    const tasks = await tasksFile('compact.jsonl', [{ id: 'compact', prompt: '[COMPACT] Check notes.txt in several steps.', files: { 'notes.txt': 'The secret word is BLUEBIRD.\nSecond line of notes.\n' } }]);
    const models = join(tmp.path, 'compact-models.json');
    // 12% of a 100k window: Claude Code compacts once its context passes ~12k tokens (the scripted usage is ~12.3k per call).
    await writeFile(models, JSON.stringify({ models: { 'scripted/default': { context_window: 100000, auto_compact_percent: 12 } } }));
    const out = join(tmp.path, 'compact-runs');
    for (const [name, extra] of [['keep', []], ['no-thinking', ['--no-keep-thinking']]] as const) {
      const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models, '--output', out, '--run-name', name, '--capture-debug', 'full', ...extra]);
      expect(r.code, r.stderr).toBe(0);
      const run = join(out, name);
      expect((await roller(['validate-run', run])).code).toBe(0);
      const row = info(run).samples[0]!;
      expect(info(run).summary).toMatchObject({ ok: 1, sft_included: 0, sft_segmented: 1, sft_excluded: 0 });
      const s = sample(run, row);
      const dir = join(run, row.path);
      // The native session really compacted, once.
      expect(readFileSync(join(dir, 'trace.jsonl'), 'utf8').match(/"subtype":"compact_boundary"/g)).toHaveLength(1);
      expect(existsSync(join(dir, 'trace_SFT.json'))).toBe(false);
      expect(s.runtime.trajectory_conversion).toEqual(
        expect.arrayContaining([expect.objectContaining({ target: 'sft', status: 'unavailable' }), { target: 'sft_segments', status: 'ok', reason: null }]),
      );
      const metas = s.trajectory.sft_segments!;
      expect(metas.map((m) => [m.path, m.order])).toEqual([['sft_segments/0001.json', 1], ['sft_segments/0002.json', 2]]);
      expect(metas[0]!.boundary_source).toBe('session_start');
      expect(metas[1]!.boundary_source).toMatch(/^claude-code compact_boundary [0-9a-f-]{36}$/);

      // The capture: every call attributed, the summary call by its recorded summary; nothing unattributed.
      const capture = join(dir, 'capture', 'attempt-0001');
      expect(readJson<Json>(join(capture, 'manifest.json'))).toMatchObject({ capture_status: 'complete', coverage: { status: 'verified' } });
      const calls = readJsonl(join(capture, 'calls.jsonl'));
      expect(calls.every((c) => c.identity_status === 'attributed')).toBe(true);
      const summaryCalls = calls.filter((c) => /compaction summary call/.test(c.status_reasons?.identity_status ?? ''));
      expect(summaryCalls).toHaveLength(1);
      const windowCalls = metas.flatMap((m) => m.call_ids);
      expect(windowCalls).not.toContain(summaryCalls[0]!.call_id);
      // Every other call is in exactly one window, in request order.
      expect(windowCalls).toEqual(calls.filter((c) => c !== summaryCalls[0]).map((c) => c.call_id));

      // The target mask: messages from target_start_index on are the window's own outputs (assistant) and what
      // the next request added (tool / user); before it, exactly the first request's context.
      const lines = readJsonl(join(run, 'sft_segments.jsonl'));
      expect(lines).toHaveLength(2);
      metas.forEach((m, i) => {
        const seg = readJson<Json>(join(dir, m.path));
        expect(lines[i]).toEqual(seg);
        const byId = new Map(calls.map((c) => [c.call_id, c]));
        const first = byId.get(m.call_ids[0]!)!;
        const system = (first.context.system as Json[]).map((b) => b.text).join('\n\n');
        expect(seg.messages[0]).toEqual({ role: 'system', content: system });
        const targets = (seg.messages as Json[]).slice(seg.target_start_index).filter((x) => x.role === 'assistant');
        expect(targets.map((t) => t.content)).toEqual(m.call_ids.map((id) => (byId.get(id)!.output.content as Json[]).filter((b) => b.type === 'text').map((b) => b.text).join('')));
        const context = (seg.messages as Json[]).slice(0, seg.target_start_index);
        // The context holds the first request's assistant turns (the second window: the turns kept verbatim
        // after the summary), never as targets.
        expect(context.filter((x) => x.role === 'assistant').length).toBe((first.context.messages as Json[]).filter((x) => x.role === 'assistant').length);
        for (const msg of seg.messages as Json[]) if (msg.role === 'assistant' && name === 'no-thinking') expect(msg.reasoning_content).toBe('');
      });
      const seg1 = readJson<Json>(join(dir, metas[0]!.path));
      expect(seg1.messages[seg1.target_start_index]).toMatchObject({ role: 'assistant', content: 'Step one.', reasoning_content: name === 'keep' ? 'First the first line.' : '' });
      // The second window starts from the summary the model wrote.
      const seg2 = readJson<Json>(join(dir, metas[1]!.path));
      expect((seg2.messages as Json[]).find((x) => x.role === 'user')?.content).toContain('[COMPACT:after]');
      expect((seg2.messages as Json[]).at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('COMPACT-DONE') });

      // roller usage: the summary call (no native message) beside the root, and totals equal to Claude Code's own.
      const usage = JSON.parse((await roller(['usage', run, '--json'])).stdout) as { samples: { tree: Json[]; reconciliation: Json }[] };
      expect(usage.samples[0]!.tree[0]!.compaction).toMatchObject({ calls: 1 });
      expect(usage.samples[0]!.reconciliation).toMatchObject({ main_agent_agrees: true, all_agents_agree: true, differences: [] });
      await expectReprocessReproduces(run);
      await expectAtifExport(run);
    }
    // Without --capture-calls segments are not written (seeds/003: opt-in); the linear SFT stays out, saying why.
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models, '--output', out, '--run-name', 'nocap']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'nocap');
    const s = sample(run, info(run).samples[0]!);
    expect(existsSync(join(run, info(run).samples[0]!.path, 'sft_segments'))).toBe(false);
    expect(existsSync(join(run, info(run).samples[0]!.path, 'trace_SFT.json'))).toBe(false);
    expect(s.runtime.trajectory_conversion).toEqual(expect.arrayContaining([{ target: 'sft_segments', status: 'unavailable', reason: expect.stringContaining('--capture-calls') }]));
    expect(info(run).summary).toMatchObject({ sft_included: 0, sft_segmented: 0, sft_excluded: 1 });
    expect(existsSync(join(run, 'sft_segments.jsonl'))).toBe(false);
  }, 5 * 60_000);
});

describe('roller collect with follow-up prompts in one Claude Code session (--resume)', () => {
  it('one session, three prompts: each reports its own cost as a session delta, and the totals reconcile with roller usage', async () => {
    const tasks = await tasksFile('followups.jsonl', [{ id: 'three', prompt: '[HELLO] first', followups: ['[HELLO] second', '[WRITE] third'], output_dirs: ['.'] }]);
    const out = join(tmp.path, 'followup-runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'followups', '--capture-debug', 'full']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'followups');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const s = sample(run, info(run).samples[0]!);
    // One native session holds the three prompts, in order.
    const actf = readJson<Json>(join(run, info(run).samples[0]!.path, 'trace_ACTF.json'));
    expect((actf.steps as Json[]).filter((x) => x.user_content !== null).map((x) => x.user_content)).toEqual(['[HELLO] first', '[HELLO] second', '[WRITE] third']);
    const reported = (s.runtime as Json).harness_reported as Json;
    expect((reported.prompts as Json[]).map((p) => p.cost_basis)).toEqual(['as_reported', 'session_delta', 'session_delta']);
    const prompts = reported.prompts as Json[];
    // The last running total is the sum of the prompts' own costs — never the running totals added up.
    expect(prompts.reduce((a, p) => a + (p.cost_usd as number), 0)).toBeCloseTo(prompts.at(-1)!.session_cumulative_cost_usd as number, 10);
    expect(reported.total_cost_usd).toBeCloseTo(prompts.at(-1)!.session_cumulative_cost_usd as number, 10);
    const usage = JSON.parse((await roller(['usage', run, '--json'])).stdout) as { samples: { reconciliation: Json }[] };
    expect(usage.samples[0]!.reconciliation).toMatchObject({ main_agent_agrees: true, all_agents_agree: true, differences: [] });
    expect(s.results.map((f) => f.path)).toContain('hello.txt');
    await expectReprocessReproduces(run);
  }, 5 * 60_000);

  it("the timeout is the sample's, all its prompts together: a second prompt that would run past it is stopped, the first one's work kept", async () => {
    // Each prompt sleeps 10 s in a tool: the first ends well inside 20 s, the second cannot (each alone would).
    const tasks = await tasksFile('deadline.jsonl', [{ id: 'slow', prompt: '[SLEEP] first', followups: ['[SLEEP] second'], timeout_s: 20 }]);
    const out = join(tmp.path, 'deadline-runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'deadline']);
    expect(r.code).toBe(1);
    const run = join(out, 'deadline');
    const s = sample(run, info(run).samples[0]!);
    expect(s.status).toBe('timeout');
    expect(s.error?.message).toMatch(/^the harness ran past the sample's 20 s in prompt 2 and was stopped/);
    // The first prompt's turn is in the trace.
    const actf = readJson<Json>(join(run, info(run).samples[0]!.path, 'trace_ACTF.json'));
    expect((actf.steps as Json[]).map((x) => x.user_content).filter((u) => u !== null)[0]).toBe('[SLEEP] first');
  }, 5 * 60_000);

  it('follow-ups are refused before anything runs for a harness that cannot continue a session here', async () => {
    const tasks = await tasksFile('followups-openclaw.jsonl', [{ id: 'x', prompt: '[HELLO] a', followups: ['[HELLO] b'] }]);
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'openclaw', '--output', join(tmp.path, 'nope'), '--run-name', 'x']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("task 'x' has followups; continuing a session is implemented for claude-code (--resume), codex (exec resume of the root thread), opencode and pi (--session) only");
    expect(existsSync(join(tmp.path, 'nope', 'x'))).toBe(false);
  });

  it('codex: a follow-up resumes the confirmed root thread after a delegation (not the newest rollout, a child\'s)', async () => {
    const tasks = await tasksFile('followups-codex.jsonl', [{ id: 'two', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', followups: ['[HELLO] one more question'], files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'codex', '--output', out, '--run-name', 'followups-codex']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'followups-codex');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const row = info(run).samples[0]!;
    const s = sample(run, row);
    const participants = s.runtime.participants as Json[];
    const root = participants.find((p) => p.role === 'root')!;
    expect(participants.filter((p) => p.role === 'child')).toHaveLength(1);
    const calls = readJsonl(join(run, row.path, 'capture', 'attempt-0001', 'calls.jsonl'));
    const last = calls.at(-1)!;
    // The follow-up's call is the root thread's, and its answer is the scripted greeting.
    expect([last.participant_id, last.native_identity.thread_id]).toEqual([root.participant, root.native_id]);
    expect(JSON.stringify(last.output)).toContain('Hello from the scripted model.');
    // The root's trajectory holds both prompts.
    const actf = readJson<Json>(join(run, row.path, 'trace_ACTF.json'));
    const prompts = (actf.steps as Json[]).filter((st) => st.user_content !== null).map((st) => JSON.stringify(st.user_content));
    expect(prompts.some((p) => p.includes('[MAIN:wait]'))).toBe(true);
    expect(prompts.some((p) => p.includes('one more question'))).toBe(true);
  }, 5 * 60_000);
});

describe('roller collect with a Claude Code sub-agent resumed by a new delegation (seeds/000 A9.4)', () => {
  it('SendMessage to the finished child: the resume is judged by its own tool id, its completion and delivery found where they happened', async () => {
    const run = await collectValidRun('claude-resume', [{ id: 'resume', prompt: '[MAIN:resume] Use a sub-agent to read notes.txt, then ask it again.', files: { 'notes.txt': 'The secret word is BLUEBIRD.\n' } }], ['--harness', 'claude-code', '--capture-debug', 'full']);
    const row = info(run).samples[0]!;
    const s = sample(run, row);
    const people = s.runtime.participants as Json[];
    expect(people.map((p) => [p.role, p.status])).toEqual([['root', 'completed'], ['child', 'completed']]);
    const child = people[1]!;
    expect(child.resumed_by).toHaveLength(1);
    const resumeId = child.resumed_by[0].tool_call_id as string;
    expect(resumeId).not.toBe(child.spawn_tool_call_id);
    expect(child.resumed_by[0]).toMatchObject({ parent_participant_id: people[0]!.participant, status: 'completed', status_source: expect.stringContaining('#task-notification.status') });
    expect(child.spawn_status).toMatchObject({ status: 'completed' });
    const capture = join(run, row.path, 'capture', 'attempt-0001');
    const manifest = readJson<Json>(join(capture, 'manifest.json'));
    expect(manifest).toMatchObject({ capture_status: 'complete', coverage: { method: 'per_id', status: 'verified' } });
    expect(manifest.participants[1]).toMatchObject({ resumed_by: child.resumed_by, spawn_status: child.spawn_status });
    const relations = readJsonl(join(capture, 'relations.jsonl'));
    const of = (tool: string) => new Set(relations.filter((r) => r.tool_call_id === tool && r.status === 'established').map((r) => r.type));
    expect(of(child.spawn_tool_call_id)).toEqual(new Set(['spawn', 'child_completed', 'result_delivered', 'result_in_context']));
    expect(of(resumeId)).toEqual(new Set(['launch_acknowledged', 'launch_ack_in_context', 'child_completed', 'result_delivered', 'result_in_context']));
    // Every call whose input delivers the resume's completion carries the task-notification naming the new tool id.
    const calls = readJsonl(join(capture, 'calls.jsonl'));
    const delivering = relations.filter((r) => r.tool_call_id === resumeId && r.type === 'result_in_context').map((r) => calls.find((c) => c.call_id === r.in_call_id)!);
    expect(delivering.length).toBeGreaterThan(0);
    for (const c of delivering) expect(JSON.stringify(c.context)).toContain(`<tool-use-id>${resumeId}</tool-use-id>`);
    // The child's calls are its own: the first run's and the resumed run's, each joined by response id.
    expect(calls.filter((c) => c.participant_id === child.participant)).toHaveLength(child.messages);
    // ToolSearch loaded SendMessage: its tool_reference result cannot be exported losslessly, so no main SFT (said so).
    expect(s.runtime.sft_eligibility).toMatchObject({ eligible: false, reason: expect.stringContaining("'tool_reference' block") });
    // An SFT that could not be exported (seeds/003 B5.2): the sample stays ok with its raw and ACTF, out of sft.jsonl,
    // and --resume reuses it rather than running the model again.
    expect(row.status).toBe('ok');
    expect(existsSync(join(run, row.path, 'trace_ACTF.json'))).toBe(true);
    expect(existsSync(join(run, row.path, 'trace_SFT.json'))).toBe(false);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
    const resumed = await roller(['collect', '--capture-calls', '--tasks', join(tmp.path, 'claude-resume.jsonl'), '--output', join(tmp.path, 'runs'), '--run-name', 'claude-resume', '--harness', 'claude-code', '--capture-debug', 'full', '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 0, skipped: 1 });
    for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);
    await expectReprocessReproduces(run);
    await expectAtifExport(run);
  }, 10 * 60_000);
});
