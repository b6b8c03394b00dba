/**
 * DeepSeek's dsh (tests/fixtures/deepseek/headless-0.1.0-rc.8, real runs: see PROVENANCE.md): its session logs as
 * roller reads them — the tree from the logs' headers, tokens against what the server sent, the spawn of each child
 * only where evidence names it, and damaged logs kept as data.
 */
import { cpSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deepSeekDelivery } from '../../../src/harnesses/deepseek/delivery.js';
import { isRollerError } from '../../../src/core/errors.js';
import { deepSeekAdapter } from '../../../src/harnesses/deepseek/adapter.js';
import { findDshLogs, readDshSession, readDshSessions, sessionsOfTrace } from '../../../src/harnesses/deepseek/session-log.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Actf, checkValue, DeepSeekEvent } from '../../../src/schemas/index.js';
import type { Call } from '../../../src/schemas/call.js';
import type { ParticipantUsage } from '../../../src/schemas/participant-usage.js';
import { attributeCalls } from '../../../src/transforms/capture/correlate.js';
import { CoverageCheck } from '../../../src/transforms/capture/coverage.js';
import { deriveRelations, tokenDisagreements } from '../../../src/transforms/capture/index.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const fixture = (run: string) => join(repoRoot, 'tests/fixtures/deepseek/headless-0.1.0-rc.8', run);
const callsOf = (run: string) => readFileSync(join(fixture(run), 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));
const tmp = useTempDir('roller-deepseek-');

async function converted(run: string, native = join(fixture(run), 'sessions')) {
  const out = join(tmp.path, run);
  const [session] = await convertNative({ harness: 'deepseek', native, out, keepThinking: true, calls: callsOf(run) });
  return { session: session!, out };
}

/** The capture layer's view of one run: calls joined by dsh's session header, relations, coverage. */
async function captured(run: string, native = join(fixture(run), 'sessions')) {
  const { session } = await converted(run, native);
  const capture = await deepSeekAdapter.nativeCapture!({ nativeRoot: native, version: '0.1.0-rc.8', session, tracePath: '', profile: null });
  const calls = attributeCalls(callsOf(run), capture.participants, 'session_id');
  const relations = deriveRelations({ calls, participants: capture.participants, delivery: deepSeekDelivery });
  const coverage = new CoverageCheck(capture.outputs);
  for (const c of calls) coverage.observe(c);
  return { participants: capture.participants, calls, relations, coverage: coverage.result(capture.participants), capture };
}

const established = (relations: readonly Json[], type: string) => relations.filter((r) => r.type === type && r.status === 'established');

describe('dsh session logs', () => {
  it('finds one log per session directory and reads the header and every event; every line is a valid roller.deepseek-events/v1 record', () => {
    const files = findDshLogs(join(fixture('nested'), 'sessions'));
    expect(files).toHaveLength(3);
    for (const f of files) {
      const s = readDshSession(f);
      expect(s.rejects).toEqual([]);
      expect(s.header.type).toBe('session');
      for (const line of s.lines) expect(checkValue(DeepSeekEvent, line), JSON.stringify(line).slice(0, 120)).toEqual([]);
    }
  });

  it('a log cut by a kill keeps what was written before the cut, and says where it ends', () => {
    const native = join(tmp.path, 'cut');
    cpSync(join(fixture('nested'), 'sessions'), native, { recursive: true });
    const grandchild = readDshSessions(native).find((s) => s.header.delegationDepth === 2)!;
    const whole = grandchild.lines.length;
    truncateSync(grandchild.file, Math.floor(statSync(grandchild.file).size * 0.6));
    const cut = readDshSession(grandchild.file);
    expect(cut.lines.length).toBeGreaterThan(0);
    expect(cut.lines.length).toBeLessThan(whole);
    expect(cut.rejects.map((r) => [r.code, r.origin.file])).toContainEqual(['ROLLER_JSONL_INVALID_JSON', grandchild.file]);
    expect(cut.rejects.some((r) => /ends early|cut/.test(r.reason))).toBe(true);
  });

  it('a file that is not a dsh log is refused naming the file and line 1', () => {
    const native = join(tmp.path, 'notdsh', 'x');
    cpSync(join(fixture('toolerror'), 'sessions'), native, { recursive: true });
    const [first] = findDshLogs(native);
    writeFileSync(first!.replace(/\.zstd$/, ''), '{"hello":"world"}\n');
    const plain = first!.replace(/\.zstd$/, '');
    const err = (() => {
      try {
        readDshSession(plain);
      } catch (e) {
        return e;
      }
    })();
    expect(isRollerError(err)).toBe(true);
    expect((err as Error).message).toContain(`${plain}:1: not a dsh session log`);
  });
});

describe('dsh runs converted and captured', () => {
  it('nested: root, child and grandchild by their headers; each spawn bound to the only subagent call of its parent; exact tokens; all relations', async () => {
    const { participants, calls, relations, coverage } = await captured('nested');
    expect(participants.map((p) => [p.role, p.depth, p.status, p.spawn_result])).toEqual([['root', 0, 'completed', null], ['child', 1, 'completed', 'result'], ['child', 2, 'completed', 'result']]);
    expect(participants[1]!.parent).toBe(participants[0]!.participant);
    expect(participants[2]!.parent).toBe(participants[1]!.participant);
    for (const p of participants.slice(1)) expect(p.spawn_tool_call_id).toMatch(/^call_/);
    // Every call is one session's by the header dsh sends; tokens per participant are what the server sent those calls.
    expect(calls.every((c) => c.identity_status === 'attributed')).toBe(true);
    expect(tokenDisagreements(calls.filter((c) => Array.isArray((c.context as Json | null)?.tools)), participants)).toEqual([]);
    expect(coverage).toMatchObject({ method: 'count', status: 'verified', expected: 6, matched: 6 });
    for (const type of ['spawn', 'child_completed', 'result_delivered']) expect(established(relations, type), type).toHaveLength(2);
  });

  it('nested: ACTF of the root from its own log (system prompt and tools from its captured request), trace.jsonl = the logs as written, root first', async () => {
    const { session, out } = await converted('nested');
    const actf = JSON.parse(readFileSync(join(out, 'trace_ACTF.json'), 'utf8')) as Actf;
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(actf).toMatchObject({ system_prompt_source: 'wire', tools_source: 'wire' });
    expect(actf.system_prompt).toMatch(/^You are an AI agent powered by DeepSeek Harness/);
    expect(actf.steps.map((s) => s.assistant_content.tool_calls.map((t) => t.name))).toEqual([['subagent'], []]);
    // The step's input is what the model was sent: the task and dsh's runtime-context message.
    expect((actf.steps[0]!.user_content as Json[]).map((b) => b.text.slice(0, 13))).toEqual(['[MAIN:nested]', 'Current runti']);
    expect(actf.steps[0]!.observation).toHaveLength(1);
    expect(actf.steps[0]!.stop_reason).toBe('tool_calls');
    const trace = readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const logs = findDshLogs(join(fixture('nested'), 'sessions')).map(readDshSession);
    const byId = new Map(logs.map((l) => [l.header.id, l]));
    expect(trace.filter((l) => l.type === 'session').map((l) => l.id)).toEqual(session.participants.map((p) => p.native_id));
    expect(trace).toEqual(session.participants.flatMap((p) => byId.get(p.native_id)!.lines));
    // The ATIF sub-agents come back from the trace's lines alone.
    const subs = deepSeekAdapter.atifSubagents!(trace, session.participants);
    expect(subs.map((s) => s.id)).toEqual(session.participants.slice(1).map((p) => p.native_id));
    expect(sessionsOfTrace(trace).map((s) => s.events.length)).toEqual(session.participants.map((p) => byId.get(p.native_id)!.events.length));
    for (const s of subs) expect(checkValue(Actf, s.actf)).toEqual([]);
  });

  it('parallel: two foreground children of one parent are not joined to either call (no id says which), their spawns unknown with why, never guessed', async () => {
    const { participants, relations, coverage } = await captured('parallel');
    const children = participants.filter((p) => p.role === 'child');
    expect(children).toHaveLength(2);
    for (const c of children) {
      expect(c).toMatchObject({ parent: participants[0]!.participant, depth: 1, status: 'completed', spawn_tool_call_id: null });
      expect(c.reason).toMatch(/made 2 subagent or subagent_reader calls and started 2 foreground children.*not known/);
    }
    expect(established(relations, 'spawn')).toEqual([]);
    expect(relations.filter((r) => r.type === 'spawn' && r.status === 'unknown')).toHaveLength(2);
    expect(coverage.status).toBe('verified');
  });

  it("background, through roller's driver: the child named by its start's own result (an acknowledgement), settled, its notice delivered to the root by the child's id", async () => {
    const { participants, relations, coverage } = await captured('background');
    const child = participants.find((p) => p.role === 'child')!;
    expect(child).toMatchObject({ status: 'completed', spawn_result: 'acknowledgement', spawn_tool_call_id: expect.stringMatching(/^call_/), messages: 2 });
    for (const type of ['launch_acknowledged', 'child_completed', 'result_delivered', 'result_in_context']) expect(established(relations, type), type).toHaveLength(1);
    expect(coverage.status).toBe('verified');
    // The notice is user input of the root's second turn, as the model was sent it.
    const { out } = await converted('background');
    const actf = JSON.parse(readFileSync(join(out, 'trace_ACTF.json'), 'utf8')) as Actf;
    const notice = actf.steps.map((s) => s.user_content).filter(Boolean).at(-1) as Json[];
    expect(notice[0]!.text).toBe(`Background subagent ${child.native_id} finished and will do no further work unless you send it more.`);
  });

  it('a notice that names another sub-agent is no delivery of this one (the text without the id is no proof)', async () => {
    const { session } = await converted('background');
    const child = session.participants.find((p) => p.role === 'child')!;
    const other = '00000000-0000-4000-8000-000000000000';
    const calls = attributeCalls(
      callsOf('background').map((c) => JSON.parse(JSON.stringify(c).split(`Background subagent ${child.native_id} `).join(`Background subagent ${other} `)) as Call),
      session.participants,
      'session_id',
    );
    const relations = deriveRelations({ calls, participants: session.participants, delivery: deepSeekDelivery });
    expect(established(relations, 'launch_acknowledged')).toHaveLength(1);
    expect(relations.filter((r) => r.type === 'result_delivered' || r.type === 'result_in_context')).toEqual([]);
  });

  it("background under dsh's own headless runner: it exits after the root's turn, so the child is running, not completed", async () => {
    const { participants, relations } = await captured('background-headless-exit');
    const child = participants.find((p) => p.role === 'child')!;
    const root = participants[0]!;
    expect(child).toMatchObject({ status: 'running', spawn_result: 'acknowledgement', spawn_tool_call_id: expect.stringMatching(/^call_/) });
    expect(child.status_source).toMatch(/has no turn\/end: the process ended while it ran/);
    expect(child.messages).toBe(0);
    expect(root.status).toBe('completed');
    expect(established(relations, 'launch_acknowledged')).toHaveLength(1);
    expect(relations.filter((r) => r.type === 'child_completed' || r.type === 'result_delivered')).toEqual([]);
  });

  it("tool error: the child's failed read is an error observation in its ACTF", async () => {
    const { out, session } = await converted('toolerror');
    const trace = readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const [child] = deepSeekAdapter.atifSubagents!(trace, session.participants as ParticipantUsage[]);
    const results = child!.actf.steps.flatMap((s) => s.observation);
    expect(results).toHaveLength(1);
    expect(results[0]!.isError).toBe(true);
  });

  it('the title request (no tools) is an auxiliary call of the root, not counted against its assistant messages', async () => {
    const { calls, capture } = await captured('nested');
    const titles = calls.filter((c) => deepSeekAdapter.auxiliaryCall!.test(c));
    expect(titles).toHaveLength(1);
    expect(titles[0]!.participant_id).toBe(capture.participants[0]!.participant);
    if (capture.outputs.method !== 'count') throw new Error('count coverage expected');
    expect(capture.outputs.counted!.test(titles[0]!)).toBe(false);
  });

  it('a sub-agent log gone from the tree: the child is not made up; its spawn is listed without a participant', async () => {
    const native = join(tmp.path, 'gone');
    cpSync(join(fixture('toolerror'), 'sessions'), native, { recursive: true });
    const child = readDshSessions(native).find((s) => s.header.parentSession)!;
    rmSync(join(child.file, '..'), { recursive: true });
    const { session, out } = await converted('toolerror', native);
    expect(session.participants.map((p) => p.role)).toEqual(['root']);
    const usage = JSON.parse(readFileSync(join(out, 'usage.json'), 'utf8')) as Json;
    expect(usage.spawns_without_participant).toEqual([expect.objectContaining({ tool_call_id: expect.stringMatching(/^call_/), status: 'not_collected', target: null })]);
    expect(usage.spawns_without_participant[0].reason).toMatch(/no session log names .* as its parent/);
  });
});
