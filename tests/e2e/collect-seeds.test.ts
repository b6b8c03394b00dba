/**
 * `roller collect` against the seeds' rules (issue 34, docs/CONFORMANCE.md): capture opt-in, reuse only of captures
 * that still validate, thinking kept or emptied, a thinking mismatch kept out of training data, refused spawns
 * listed. The real Claude Code and OpenCode CLIs on the embedded scripted model.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRuns, DUMMY_KEY, filesUnder, info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { useTempDir } from '../support/temp-dir.js';
import { loopbackPeerCommand } from '../support/socket-owner.js';
import { rollerBin } from '../support/paths.js';
import { startScriptedModel } from '../../src/sources/scripted-model/index.js';

type Json = Record<string, any>;
const tmp = useTempDir('collect-seeds');
const { tasksFile } = collectRuns(tmp);

describe('roller collect: capture is opt-in (seeds/000 --capture-calls)', () => {
  it('off by default: no capture/, the lock says so, a resume cannot mix; it needs the wire trace; OpenCode offers no task tool without it', async () => {
    const tasks = await tasksFile('optin-tasks.jsonl', [{ id: 'delegate', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'plain'];
    const r = await roller(args);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'plain');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const dir = join(run, info(run).samples[0]!.path);
    expect(existsSync(join(dir, 'capture'))).toBe(false);
    expect(sample(run, info(run).samples[0]!).runtime.capture).toBeNull();
    expect(readJson<Json>(join(run, 'lock.json')).options.capture_calls).toBe(false);
    expect(existsSync(join(dir, 'trace_SFT.json'))).toBe(true); // the trajectory is whole without it

    const mixed = await roller([...args, '--resume', '--capture-calls']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('$.options.capture_calls: false -> true');

    // The legacy alias turns capture on too (seeds/000 keeps it).
    const alias = await roller(['collect', '--claude-capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'alias']);
    expect(alias.code, alias.stderr).toBe(0);
    expect(readJson<Json>(join(out, 'alias', 'lock.json')).options.capture_calls).toBe(true);
    expect(existsSync(join(out, 'alias', info(join(out, 'alias')).samples[0]!.path, 'capture', 'attempt-0001', 'manifest.json'))).toBe(true);

    const noWire = await roller(['collect', '--capture-calls', '--wire-trace', 'off', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'nowire']);
    expect(noWire.code).toBe(2);
    expect(noWire.stderr).toContain('--capture-calls records calls from the wire: it needs the wire trace on');
    expect(existsSync(join(out, 'nowire'))).toBe(false);

    // OpenCode without capture: its requests offer no task tool, so no child session is made, and the delegation the
    // scripted model cannot script is an error sample (issue 49), said at the start.
    const oc = await roller(['collect', '--tasks', tasks, '--harness', 'opencode', '--wire-trace', 'full', '--output', out, '--run-name', 'oc-plain']);
    expect(oc.code, oc.stderr).toBe(1);
    expect(oc.stderr).toContain('roller collect: opencode runs without its delegation tool');
    const ocRun = join(out, 'oc-plain');
    expect(info(ocRun).samples[0]!.error?.code).toBe('ROLLER_SCRIPT_ERROR');
    const ocDir = join(ocRun, info(ocRun).samples[0]!.path);
    const offered = readJsonl(join(ocDir, 'wire_trace.jsonl')).flatMap((e) => ((e.body?.tools ?? []) as Json[]).map((t) => t.function?.name as string));
    expect(offered).toContain('read');
    expect(offered).not.toContain('task');
    expect((sample(ocRun, info(ocRun).samples[0]!).runtime.participants as Json[]).map((p) => p.role)).toEqual(['root']);
  }, 10 * 60_000);
});

describe('roller collect --resume checks each capture before reuse (seeds/000)', () => {
  it('a capture changed after publication (calls.jsonl edited, junk appended to relations.jsonl) is collected again, saying why', async () => {
    const tasks = await tasksFile('tamper-tasks.jsonl', [
      { id: 'hello', prompt: '[HELLO] hi' },
      { id: 'delegate', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } },
      { id: 'again', prompt: '[HELLO] hi again' },
    ]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'tamper'];
    expect((await roller(args)).code).toBe(0);
    const run = join(out, 'tamper');
    const { appendFileSync, writeFileSync } = await import('node:fs');
    const captureOf = (i: number) => join(run, info(run).samples[i]!.path, 'capture', 'attempt-0001');
    const calls = join(captureOf(0), 'calls.jsonl');
    writeFileSync(calls, readFileSync(calls, 'utf8').replace('"execution_status":"completed"', '"execution_status":"failed"'));
    appendFileSync(join(captureOf(1), 'relations.jsonl'), 'not a relation\n');
    // An SFT that is no longer the projection of its ACTF is not reused either (seeds/003 §7.4).
    const sftFile = join(run, info(run).samples[2]!.path, 'trace_SFT.json');
    writeFileSync(sftFile, readFileSync(sftFile, 'utf8').replace('hi again', 'hi AGAIN'));

    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 3, skipped: 0 });
    expect(readFileSync(sftFile, 'utf8')).toContain('hi again');
    for (const i of [0, 1]) expect(resumed.stderr).toContain(`${join(run, info(run).samples[i]!.path)} is collected again, its capture fails validation`);
    expect(resumed.stderr).toMatch(/calls\.jsonl: sha256 .* differs from the manifest/);
    expect((await roller(['validate-run', run])).code).toBe(0);
    // Collected again, they hold: the next resume reuses both.
    const again = await roller([...args, '--resume']);
    expect(again.stderr).not.toContain('fails validation');
    expect(info(run).summary).toMatchObject({ ok: 0, skipped: 3 });
  }, 10 * 60_000);

  it('--wire-trace full: a sample whose wire_trace.jsonl is gone is collected again (seeds/003 §7.4), one that has it is reused', async () => {
    const tasks = await tasksFile('wired-tasks.jsonl', [{ id: 'a', prompt: '[HELLO] hi' }, { id: 'b', prompt: '[HELLO] hi again' }]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'wired', '--wire-trace', 'full'];
    expect((await roller(args)).code).toBe(0);
    const run = join(out, 'wired');
    const traceOf = (i: number) => join(run, info(run).samples[i]!.path, 'wire_trace.jsonl');
    const { rmSync } = await import('node:fs');
    rmSync(traceOf(0));
    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 1, skipped: 1 });
    expect(existsSync(traceOf(0))).toBe(true);
    expect((await roller(['validate-run', run])).code).toBe(0);
  }, 10 * 60_000);
});

describe('the default wire mode (actf) keeps its wire file only while it is needed (seeds/003 §2.1, §5.5)', () => {
  it("Claude Code: the ACTF's tools carry the input_schema the requests sent, yet no wire_trace.jsonl stays anywhere in the run", async () => {
    const tasks = await tasksFile('actf-wire-tasks.jsonl', [{ id: 'write', prompt: '[WRITE] write hello.txt' }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'actf-wire']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'actf-wire');
    expect(readJson<Json>(join(run, 'lock.json')).options.wire_trace).toBe('actf');
    const actf = readJson<Json>(join(run, info(run).samples[0]!.path, 'trace_ACTF.json'));
    // From the temporary wire file: the real schema, not the permissive one derived from tool_use alone.
    const write = (actf.tools as Json[]).find((t) => t.function?.name === 'Write')!;
    expect(Object.keys(write.function.parameters.properties as Json).sort()).toEqual(['content', 'file_path']);
    const { readdirSync } = await import('node:fs');
    expect((readdirSync(run, { recursive: true }) as string[]).filter((f) => f.includes('wire_trace'))).toEqual([]);
  }, 10 * 60_000);
});

describe('roller collect --no-keep-thinking (seeds/003: reasoning emptied in ACTF and SFT, raw untouched)', () => {
  it('ACTF, SFT and the exported ATIF (sub-agents included) hold no reasoning; trace.jsonl keeps what the harness wrote', async () => {
    const tasks = await tasksFile('nothink-tasks.jsonl', [{ id: 'delegate', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const runs: Record<string, string> = {};
    for (const [name, extra] of [['think', []], ['nothink', ['--no-keep-thinking']]] as const) {
      const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', name, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      runs[name] = join(out, name);
      expect((await roller(['export', runs[name]!])).code).toBe(0);
    }
    const reasoningOf = (run: string) => {
      const dir = join(run, info(run).samples[0]!.path);
      const actf = readJson<{ steps: { assistant_content: { reasoning_content: string | null } }[] }>(join(dir, 'trace_ACTF.json'));
      const atif = readFileSync(filesUnder(join(run, 'atif')).find((f) => f.endsWith('trajectory.json'))!, 'utf8');
      return { actf: actf.steps.map((st) => st.assistant_content.reasoning_content), atif: (JSON.parse(atif) as Json), raw: readFileSync(join(dir, 'trace.jsonl'), 'utf8') };
    };
    const kept = reasoningOf(runs.think!);
    const emptied = reasoningOf(runs.nothink!);
    const visible = kept.actf.filter((r): r is string => typeof r === 'string' && r !== '');
    expect(visible.length).toBeGreaterThan(0); // the scripted model reasons in this task
    expect(emptied.actf).toEqual(kept.actf.map((r) => (r === null ? null : '')));
    for (const text of visible) {
      expect(emptied.raw).toContain(JSON.stringify(text).slice(1, 40)); // raw keeps the reasoning as written
      expect(JSON.stringify(emptied.atif)).not.toContain(JSON.stringify(text).slice(1, 40));
    }
    // The sub-agent's embedded trajectory too: reasoning in the kept run, none in the other.
    const subReasoning = (atif: Json) => ((atif.subagent_trajectories ?? []) as Json[]).flatMap((t) => (t.steps as Json[]).map((st) => st.reasoning_content ?? null)).filter((r) => typeof r === 'string' && r !== '');
    expect(subReasoning(kept.atif).length).toBeGreaterThan(0);
    expect(subReasoning(emptied.atif)).toEqual([]);
    const sft = readJson<Json>(join(runs.nothink!, info(runs.nothink!).samples[0]!.path, 'trace_SFT.json'));
    expect((sft.messages as Json[]).filter((m) => m.role === 'assistant').every((m) => m.reasoning_content === '')).toBe(true);
  }, 10 * 60_000);
});

describe('roller collect --thinking off (seeds/003: a mismatch is warned and kept out of sft.jsonl, on resume too)', () => {
  it('Claude Code asked for no thinking (MAX_THINKING_TOKENS=0) still returns visible reasoning: thinking_effort_mismatch', async () => {
    const tasks = await tasksFile('off-tasks.jsonl', [{ id: 'delegate', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'off', '--thinking', 'off'];
    const r = await roller(args);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'off');
    const s = sample(run, info(run).samples[0]!);
    const audit = s.runtime.thinking_audit as Json;
    expect(audit).toMatchObject({ status: 'mismatch', requested: 'off' });
    expect(audit.steps_with_reasoning).toBeGreaterThan(0);
    expect(s.runtime.sft_eligibility).toEqual({ eligible: false, reason: 'thinking_effort_mismatch' });
    expect((s.runtime as Json).warnings).toEqual([expect.stringContaining('thinking off was requested')]);
    expect(r.stderr).toContain('1 samples hold visible reasoning though --thinking off asked for none');
    // Kept for inspection, the returned reasoning untouched; not in the run's training file.
    expect(existsSync(join(run, info(run).samples[0]!.path, 'trace_SFT.json'))).toBe(true);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
    // summary.training: the same policy, counted (the CLI's lines read it).
    const training = { processed: 1, sft_eligible: 0, excluded: { thinking_effort_mismatch: 1 }, thinking_mismatch: 1, wire_effort_mismatch: 1 };
    expect(info(run).summary.training).toMatchObject(training);
    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ skipped: 1, training }); // reused samples are counted too
    expect(resumed.stderr).toContain('1 samples hold visible reasoning though --thinking off asked for none');
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
  }, 10 * 60_000);
});

describe('B15.7: each audit alone keeps a sample out of sft.jsonl (no earlier exclusion decides it)', () => {
  it('a wire-effort mismatch alone: Claude Code under --thinking off --no-keep-thinking (the thinking audit cannot see) still sends an effort', async () => {
    const tasks = await tasksFile('effort-tasks.jsonl', [{ id: 'hello', prompt: '[HELLO] hi' }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'effort', '--thinking', 'off', '--no-keep-thinking']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'effort');
    const row = info(run).samples[0]!;
    const s = sample(run, row);
    expect(row.status).toBe('ok');
    expect(s.runtime.thinking_audit).toMatchObject({ status: 'not_observable' });
    expect(s.runtime.wire_effort_audit).toMatchObject({ status: 'mismatch', requested: 'off', source: 'wire' });
    expect(s.runtime.sft_eligibility).toEqual({ eligible: false, reason: expect.stringMatching(/^wire_effort_mismatch: requests asked for \w+, not off$/) });
    expect(existsSync(join(run, row.path, 'trace_SFT.json'))).toBe(true);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
    expect(info(run).summary.training).toMatchObject({ processed: 1, sft_eligible: 0, excluded: { wire_effort_mismatch: 1 } });
  }, 10 * 60_000);

  it('a final answer cut at the output-token limit alone: Pi ends ok on finish_reason length, its SFT is not training data', async () => {
    const tasks = await tasksFile('cut-tasks.jsonl', [{ id: 'cut', prompt: '[CUT-ANSWER] what is it?' }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'pi', '--output', out, '--run-name', 'cut']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'cut');
    const row = info(run).samples[0]!;
    const s = sample(run, row);
    expect(row.status).toBe('ok');
    expect(s.runtime.completion_audit).toMatchObject({ status: 'flagged', reason: 'the final response stopped at a token limit (length)', source: 'wire' });
    expect(s.runtime.sft_eligibility).toEqual({ eligible: false, reason: 'incomplete_trajectory: the final response stopped at a token limit (length)' });
    expect(existsSync(join(run, row.path, 'trace_SFT.json'))).toBe(true);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
    expect(r.stderr).toContain('1 samples end incomplete (token limit or empty answer): excluded from sft.jsonl');
  }, 10 * 60_000);
});

describe('roller collect: a spawn the harness refused is listed, not dropped (seeds/004)', () => {
  it('Claude Code refuses an unknown agent type: no participant, the call in runtime.spawns_without_participant with the CLI\'s words', async () => {
    const tasks = await tasksFile('refused-tasks.jsonl', [{ id: 'refused', prompt: '[MAIN:refused] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'refused']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'refused');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const s = sample(run, info(run).samples[0]!);
    const participants = s.runtime.participants as Json[];
    expect(participants.map((p) => p.role)).toEqual(['root']);
    expect(s.runtime.spawns_without_participant).toEqual([
      { participant: participants[0]!.participant, tool_call_id: expect.stringMatching(/^toolu_/), target: null, status: 'failed', reason: expect.stringContaining("Agent type 'no-such-agent' not found"), source: expect.stringMatching(/\.jsonl:\d+$/) },
    ]);
  }, 10 * 60_000);
});

describe('roller collect: sample directory names (seeds/003 layout)', () => {
  it('sample directories sort in request order (a zero-padded index); a run with the unpadded names of older rollers resumes in place', async () => {
    const tasks = await tasksFile('names-tasks.jsonl', Array.from({ length: 11 }, (_, i) => ({ id: `t${i}`, prompt: '[HELLO] hi' })));
    const out = join(tmp.path, 'runs');
    const args = ['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'names', '--concurrency', '2'];
    expect((await roller(args)).code).toBe(0);
    const run = join(out, 'names');
    const dirs = readdirSync(join(run, 'samples', 'scripted_default'));
    expect(dirs).toEqual(Array.from({ length: 11 }, (_, i) => `${String(i).padStart(4, '0')}_t${i}`));
    expect(dirs).toEqual([...dirs].sort());
    // The same run as an older roller laid it out: unpadded names, info.json naming them.
    const { renameSync, writeFileSync } = await import('node:fs');
    for (const d of dirs) renameSync(join(run, 'samples', 'scripted_default', d), join(run, 'samples', 'scripted_default', d.replace(/^0+(?=\d)/, '')));
    const runInfo = info(run);
    for (const row of runInfo.samples) row.path = row.path.replace(/\/0+(?=\d)/, '/');
    writeFileSync(join(run, 'info.json'), JSON.stringify(runInfo, null, 2));
    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(info(run).summary).toMatchObject({ ok: 0, skipped: 11 });
    expect(readdirSync(join(run, 'samples', 'scripted_default')).sort()).toEqual(Array.from({ length: 11 }, (_, i) => `${i}_t${i}`).sort());
    expect(info(run).samples.map((r) => r.path)).toEqual(Array.from({ length: 11 }, (_, i) => `samples/scripted_default/${i}_t${i}`));
    expect((await roller(['validate-run', run])).code).toBe(0);
  }, 10 * 60_000);
});

describe('roller collect --cache-trace: OpenClaw\'s own cache trace (seeds/003 B12.1; seeds/000 A5.3, A9.12)', () => {
  it('on by default for OpenClaw, kept redacted with --wire-trace full; --no-cache-trace turns it off; other harnesses refuse it', async () => {
    const tasks = await tasksFile('cache-trace.jsonl', [{ id: 'spawn', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' } }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'openclaw', '--wire-trace', 'full', '--output', out, '--run-name', 'cache-full']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'cache-full');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const trace = readJsonl(join(run, info(run).samples[0]!.path, 'cache_trace.jsonl'));
    const contexts = trace.filter((e) => e.stage === 'stream:context');
    // One per model call of the root and the child, each with the system prompt the model saw.
    expect(contexts.length).toBe((sample(run, info(run).samples[0]!).runtime.participants as Json[]).reduce((n, p) => n + (p.messages as number), 0));
    for (const e of contexts) expect(typeof e.system).toBe('string');
    expect(new Set(trace.map((e) => e.sessionKey))).toEqual(new Set(['agent:main:main', expect.stringMatching(/^agent:main:subagent:/)]));
    for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);

    // The completion event reaches the parent as an announcement run: the relation names that run (A5.3), and the
    // root's ACTF gets the event back as the input of the reply it led to — the transcript does not keep it (A9.12).
    const dir = join(run, info(run).samples[0]!.path);
    const delivery = readJsonl(join(dir, 'capture', 'attempt-0001', 'relations.jsonl')).find((x) => x.type === 'result_in_context' && (x.evidence as Json[]).length > 1)!;
    expect(delivery.status).toBe('established');
    expect(delivery.evidence[1]).toMatchObject({ source: 'logs/cache-trace.jsonl', event_id: expect.stringMatching(/^announce:v1:agent:main:subagent:/) });
    const steps = readJson<Json>(join(dir, 'trace_ACTF.json')).steps as Json[];
    const answer = steps.at(-1)!;
    expect(answer.user_content).toContain('source: subagent');
    expect(answer.user_content).toContain(`session_key: ${delivery.evidence[1].event_id.split(':').slice(2, -1).join(':')}`);
    expect(sample(run, info(run).samples[0]!).runtime.sft_eligibility?.eligible).toBe(true);
    // B13.3: roller's OpenClaw profile declares its model without reasoning, so no request sends back earlier
    // reasoning (there is nothing a --no-keep-thinking rewrite would have to strip), though the model returned some.
    const wire = readJsonl(join(dir, 'wire_trace.jsonl'));
    const history = wire.flatMap((w) => ((w.body?.messages ?? []) as Json[]).filter((m) => m.role === 'assistant'));
    expect(history.length).toBeGreaterThan(0);
    for (const m of history) expect(Object.keys(m).filter((k) => /reasoning|thinking/.test(k)), JSON.stringify(m).slice(0, 200)).toEqual([]);
    expect(readJsonl(join(dir, 'capture', 'attempt-0001', 'calls.jsonl')).some((c) => typeof c.output?.choices?.[0]?.message?.reasoning_content === 'string')).toBe(true);
    expect(readJsonl(join(run, 'sft.jsonl'))).toHaveLength(1);

    // Without the cache trace nothing binds the announcement: the delivery is unknown, and no linear SFT is made of a
    // reply whose input is missing.
    const off = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'openclaw', '--no-cache-trace', '--wire-trace', 'full', '--output', out, '--run-name', 'cache-off']);
    expect(off.code, off.stderr).toBe(0);
    const offRun = join(out, 'cache-off');
    expect((await roller(['validate-run', offRun])).code).toBe(0);
    expect(readJson<Json>(join(offRun, 'lock.json')).options.cache_trace).toBe(false);
    const offDir = join(offRun, info(offRun).samples[0]!.path);
    expect(existsSync(join(offDir, 'cache_trace.jsonl'))).toBe(false);
    const unbound = readJsonl(join(offDir, 'capture', 'attempt-0001', 'relations.jsonl')).filter((x) => x.type === 'result_in_context');
    expect(unbound.length).toBeGreaterThan(0);
    for (const x of unbound) {
      expect(x.status).toBe('unknown');
      expect(x.reason).toContain('no announcement run');
    }
    const eligibility = sample(offRun, info(offRun).samples[0]!).runtime.sft_eligibility;
    expect(eligibility?.eligible).toBe(false);
    expect(JSON.stringify(eligibility)).toContain('an input the transcript does not keep');
    expect(existsSync(join(offRun, 'sft.jsonl')) ? readFileSync(join(offRun, 'sft.jsonl'), 'utf8').trim() : '').toBe('');

    const refused = await roller(['collect', '--cache-trace', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'cache-cc']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--cache-trace records OpenClaw's cache trace; claude-code has none");
  }, 10 * 60_000);
});

describe('roller collect: OpenClaw sub-agents that do not settle (seeds/000 A9.11)', () => {
  it('the turn that succeeded keeps its status; the drain failure is a capture error naming the child left running', async () => {
    // 120 s: the drain waits till 30 s before the end (90 s in); at 75 s a loaded machine ran the whole sample past its time.
    const tasks = await tasksFile('hung-child.jsonl', [{ id: 'hung', prompt: '[MAIN:hung-child] Use a sub-agent to read notes.txt.', files: { 'notes.txt': 'BLUEBIRD\n' }, timeout_s: 120 }]);
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'openclaw', '--output', out, '--run-name', 'hung-child']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'hung-child');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const row = info(run).samples[0]!;
    expect(row.status).toBe('ok');
    const runtime = sample(run, row).runtime;
    expect(runtime.capture_errors).toEqual([
      {
        code: 'ROLLER_DRAIN_INCOMPLETE',
        message: expect.stringContaining('sub-agents still running after 90 s into the run: agent:main:subagent:'),
        children: [{ native_id: expect.stringMatching(/^agent:main:subagent:/), native_status: 'running', delivery_status: expect.any(String), recorded: 'running' }],
      },
    ]);
    expect(runtime.warnings).toEqual(expect.arrayContaining([expect.stringContaining('ROLLER_DRAIN_INCOMPLETE')]));
  }, 10 * 60_000);
});

describe('roller collect --wire-trace off starts no recording proxy (seeds/003, CONFORMANCE B13.4)', () => {
  it('the CLI itself connects to the model API, sends no roller header, and nothing of the calls is kept; with the wire trace on, roller is the peer', async () => {
    // The model API: the scripted model behind a TCP relay that notes which process each connection came from.
    const model = await startScriptedModel();
    const modelPort = Number(new URL(model.url).port);
    // Each connection: the process it came from, and its first request's head.
    const seen: { peer: string; head: string }[] = [];
    const relay = createServer((client) => {
      const conn = { peer: loopbackPeerCommand(client.remotePort!, (relay.address() as AddressInfo).port) ?? 'unknown', head: '' };
      seen.push(conn);
      client.once('data', (chunk: Buffer) => (conn.head = chunk.toString('latin1').split('\r\n\r\n')[0]!));
      const upstream = connect(modelPort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      const end = () => (client.destroy(), upstream.destroy());
      client.on('error', end);
      upstream.on('error', end);
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    try {
      const config = join(tmp.path, 'relay-model.json');
      writeFileSync(config, JSON.stringify({ models: { 'acme/relay': { api_base: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, api_key_env: 'ACME_KEY' } } }));
      const tasks = await tasksFile('off.jsonl', [{ id: 'write', prompt: '[WRITE] Write hi into hello.txt.', output_dirs: ['.'] }]);
      const out = join(tmp.path, 'runs');
      const env = { env: { ...process.env, ACME_KEY: 'k-relay-test' } };
      // Without a proxy the harness would hold the key: refused unless the user says so (key custody, issue 47).
      const custody = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'acme/relay', '--model-config', config, '--wire-trace', 'off', '--output', out, '--run-name', 'wire-off-custody'], env);
      expect([custody.code, custody.stderr]).toEqual([2, expect.stringContaining('--key-in-harness')]);
      expect(seen.every((c) => c.head.startsWith('HEAD '))).toBe(true); // no model call was made
      const off = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'acme/relay', '--model-config', config, '--wire-trace', 'off', '--key-in-harness', '--thinking', 'high', '--output', out, '--run-name', 'wire-off'], env);
      expect(off.code, off.stderr).toBe(0);
      const run = join(out, 'wire-off');
      expect((await roller(['validate-run', run])).code).toBe(0);
      // Roller's one look that the API answers (a HEAD before any sample); every model call came from the CLI's own process.
      const calls = (list: typeof seen) => list.filter((c) => !c.head.startsWith('HEAD '));
      expect(seen.filter((c) => c.head.startsWith('HEAD ')).every((c) => c.peer.includes(rollerBin))).toBe(true);
      expect(calls(seen).length).toBeGreaterThan(0);
      for (const c of calls(seen)) expect(c.peer !== 'unknown' && !c.peer.includes(rollerBin), c.peer).toBe(true);
      for (const c of calls(seen)) expect(c.head.toLowerCase()).not.toContain('x-roller-');
      const dir = join(run, info(run).samples[0]!.path);
      expect(readdirSync(dir).sort()).toEqual(['info.json', 'results', 'trace.jsonl', 'trace_ACTF.json', 'trace_SFT.json']);
      expect(sample(run, info(run).samples[0]!).usage?.requests).toBe(0);
      // No request was captured: the effort audit reads Claude Code's own request records, and says so (B15.5).
      expect(sample(run, info(run).samples[0]!).runtime.wire_effort_audit).toMatchObject({ status: 'matched', requested: 'high', source: 'native' });
      for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes('k-relay-test'), f).toBe(false);

      // The same with the wire trace on: every connection comes from roller's proxy, not the CLI.
      seen.length = 0;
      const on = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'acme/relay', '--model-config', config, '--output', out, '--run-name', 'wire-on'], env);
      expect(on.code, on.stderr).toBe(0);
      expect(calls(seen).length).toBeGreaterThan(0);
      for (const c of calls(seen)) expect(c.peer).toContain(rollerBin);

      // A base with a query only the proxy can carry is refused before anything runs.
      writeFileSync(config, JSON.stringify({ models: { 'acme/relay': { api_base: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/?tenant=x`, api_key_env: 'ACME_KEY' } } }));
      const refused = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'acme/relay', '--model-config', config, '--wire-trace', 'off', '--output', out, '--run-name', 'wire-off-query'], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("api_base has a query, which only roller's recording proxy carries");
    } finally {
      relay.close();
      await model.close();
    }
  }, 10 * 60_000);
});
