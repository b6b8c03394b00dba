/**
 * The real Codex CLI (0.171.0, `roller harness install codex`) runs `codex exec` through `roller proxy` against
 * `roller scripted-model`, offline, over HTTP SSE and over the Responses WebSocket. Every generating call's
 * response id must be a `token_usage_record.response_id` of the thread's rollout and the other way round; the
 * thread-id header must be the rollout's session id. Fails (never passes silently) when Codex cannot install.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { codexDelivery } from '../../src/harnesses/codex/delivery.js';
import { codexPlan } from '../../src/harnesses/codex/launch.js';
import type { ParticipantUsage } from '../../src/harnesses/claude-code/participants.js';
import { Call as CallSchema, Manifest, Relation, SftRecord, checkValue, type Call } from '../../src/schemas/index.js';
import { attributeCalls, deriveRelations } from '../../src/transforms/capture/index.js';
import { validateCapture } from '../../src/pipelines/capture/validate.js';
import { finalizeCapture } from '../../src/pipelines/capture/index.js';
import { runProcess } from '../../src/sources/process-runner.js';
import { rollerBin } from '../support/paths.js';
import { codexTokensOf, useE2e } from '../support/e2e.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('e2e-codex');
const e2e = useE2e('codex');
const startRoller = e2e.startRoller;


async function rolloutRecords(home: string): Promise<Json[]> {
  const out: Json[] = [];
  for (const e of await readdir(join(home, 'sessions'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.jsonl')) continue;
    for (const line of (await readFile(join(e.parentPath, e.name), 'utf8')).split('\n')) if (line.trim()) out.push(JSON.parse(line) as Json);
  }
  return out;
}

describe('Codex through roller proxy (e2e, real CLI)', () => {
  it.each([
    { transport: 'HTTP SSE', websocket: false },
    { transport: 'Responses WebSocket', websocket: true },
  ])('$transport: every call is joined to the rollout by response id', async ({ websocket }) => {
    const base = join(tmp.path, websocket ? 'ws' : 'http');
    const home = join(base, 'home');
    const work = join(base, 'work');
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'hello.txt'), 'hello from codex-demo\n');
    const proxy = await startRoller('proxy', '--upstream', e2e.modelUrl, '--out', join(base, 'capture'));
    const apiKey = 'dummy-codex-provider-key-42';
    const plan = await codexPlan({ bin: e2e.bin, prompt: '[WRITE] please write hello.txt', home, work, baseUrl: proxy.url, apiKey, rollerHeaders: { 'x-roller-run-id': 'run-e2e' }, websocket });
    const outcome = await runProcess(plan, { timeoutMs: 180_000, stdoutPath: join(base, 'stdout.jsonl'), stderrPath: join(base, 'stderr.txt') });
    expect(outcome.exitCode, (await readFile(join(base, 'stderr.txt'), 'utf8')).slice(-2000)).toBe(0);
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');

    expect(await readFile(join(work, 'hello.txt'), 'utf8')).toBe('hi\n'); // the scripted exec_command ran
    const calls = (await readFile(join(base, 'capture', 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    for (const c of calls) {
      expect(checkValue(CallSchema, c)).toEqual([]);
      expect(c).toMatchObject({ protocol: 'openai-responses', execution_status: 'completed', response_capture_status: 'complete', http_status: websocket ? 101 : 200 });
      expect(c.native_identity.run_id).toBe('run-e2e');
      expect(c.dropped_request_headers).toContain('x-roller-run-id');
    }
    // A WebSocket session starts with a prewarm (generate: false) that produces nothing and is not in the rollout.
    const prewarm = calls.filter((c) => (c.context as Json).generate === false);
    expect(prewarm.length).toBe(websocket ? 1 : 0);
    for (const c of prewarm) expect((c.output as Json).output).toEqual([]);
    const generating = calls.filter((c) => (c.context as Json).generate !== false);
    expect(generating.length).toBe(2);

    const rollout = await rolloutRecords(home);
    const native = rollout.filter((r) => r.type === 'token_usage_record').map((r) => (r.payload ?? r).response_id as string);
    expect(generating.map((c) => c.response_id).sort()).toEqual([...native].sort());
    const meta = rollout.find((r) => r.type === 'session_meta');
    const threadId = (meta?.payload ?? meta)?.id as string;
    for (const c of calls) expect(c.native_identity.thread_id).toBe(threadId);
    for (const f of ['calls.jsonl', 'raw/wire.frames']) expect(await readFile(join(base, 'capture', f), 'latin1')).not.toContain(apiKey);

    // Convert the rollout with the captured wire: the thread's tokens are the usage the server sent, and
    // SFT is possible because the tool definitions come from the actual requests.
    const out = join(base, 'converted');
    const conv = spawn(rollerBin, ['convert', '--harness', 'codex', '--native', home, '--out', out, '--wire', join(base, 'capture', 'calls.jsonl')], { stdio: 'inherit' });
    expect(((await once(conv, 'exit')) as [number])[0]).toBe(0);
    const usage = JSON.parse(await readFile(join(out, 'usage.json'), 'utf8')) as Json;
    const thread = (usage.participants as Json[])[0]!;
    expect(thread.tokens).toEqual(codexTokensOf(generating.map((c) => c.usage.reported as Json)));
    const actf = JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')) as Json;
    expect(actf.tools_source).toBe('wire');
    expect(actf.steps.map((st: Json) => st.native_ids.response_id)).toEqual(generating.map((c) => c.response_id));
    const sft = JSON.parse(await readFile(join(out, 'trace_SFT.json'), 'utf8')) as unknown;
    expect(checkValue(SftRecord, sft)).toEqual([]);
  }, 300_000);
});

describe('Codex multi-agent through roller proxy (e2e, real CLI)', () => {
  it.each([
    { version: 'v1', args: [] as string[] },
    { version: 'v2 (warm fork)', args: ['--enable', 'multi_agent_v2'] },
  ])('$version: spawn, child exec_command, wait; tokens per thread; root ACTF without child steps', async ({ version, args }) => {
    const base = join(tmp.path, `multi-${version.replace(/\W+/g, '')}`);
    const home = join(base, 'home');
    const work = join(base, 'work');
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'notes.txt'), 'The secret word is BLUEBIRD.\n');
    const proxy = await startRoller('proxy', '--upstream', e2e.modelUrl, '--out', join(base, 'capture'));
    const plan = await codexPlan({ bin: e2e.bin, prompt: '[MAIN:wait] use a sub-agent to read notes.txt', home, work, baseUrl: proxy.url, apiKey: 'dummy-codex-provider-key-42', extraArgs: args });
    const outcome = await runProcess(plan, { timeoutMs: 180_000, stdoutPath: join(base, 'stdout.jsonl'), stderrPath: join(base, 'stderr.txt') });
    expect(outcome.exitCode, (await readFile(join(base, 'stderr.txt'), 'utf8')).slice(-2000)).toBe(0);
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    expect(await readFile(join(base, 'stdout.jsonl'), 'utf8')).toContain('BLUEBIRD'); // the child's answer reached the root

    const calls = (await readFile(join(base, 'capture', 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    const rollout = await rolloutRecords(home);
    const threadIds = new Set(rollout.filter((r) => r.type === 'session_meta').map((r) => (r.payload ?? r).id as string));
    const responseIds = new Set(rollout.filter((r) => r.type === 'token_usage_record').map((r) => (r.payload ?? r).response_id as string));
    expect(new Set(calls.map((c) => c.native_identity.thread_id)).size).toBe(2);
    for (const c of calls) {
      expect(c.execution_status).toBe('completed');
      expect(threadIds, `thread-id ${c.native_identity.thread_id} names a rollout`).toContain(c.native_identity.thread_id);
      expect(responseIds, `response ${c.response_id} is a token_usage_record`).toContain(c.response_id);
    }
    expect([...responseIds].sort()).toEqual(calls.map((c) => c.response_id).sort());

    const out = join(base, 'converted');
    const conv = spawn(rollerBin, ['convert', '--harness', 'codex', '--native', home, '--out', out, '--wire', join(base, 'capture', 'calls.jsonl')], { stdio: 'inherit' });
    expect(((await once(conv, 'exit')) as [number])[0]).toBe(0);
    const usage = JSON.parse(await readFile(join(out, 'usage.json'), 'utf8')) as Json;
    const participants = usage.participants as Json[];
    expect(participants.map((p) => p.role).sort()).toEqual(['child', 'root']);
    for (const p of participants) {
      // For the v2 child this is the replayed-prefix check: only what the server sent to the child counts.
      const mine = calls.filter((c) => c.native_identity.thread_id === p.native_id).map((c) => c.usage.reported as Json);
      expect(p.tokens, p.participant).toEqual(codexTokensOf(mine));
    }
    const child = participants.find((p) => p.role === 'child')!;
    const root = participants.find((p) => p.role === 'root')!;
    expect(child).toMatchObject({ parent: root.participant, depth: 1, status: 'completed', reason: null });
    const actf = JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')) as Json;
    const rootCalls = calls.filter((c) => c.native_identity.thread_id === root.native_id);
    expect(actf.steps.map((st: Json) => st.native_ids.response_id)).toEqual(rootCalls.map((c) => c.response_id));
    // Attribution by evidence and relations: every call attributed; spawn, child_completed, and the
    // spawn's immediate output as a launch acknowledgement (the result comes through wait_agent).
    const attributed = attributeCalls(calls, participants as ParticipantUsage[]);
    for (const c of attributed) expect(c.identity_status, `call ${c.seq}`).toBe('attributed');
    const agentPaths = Object.fromEntries(
      rollout.filter((r) => r.type === 'session_meta' && typeof (r.payload ?? r).agent_path === 'string').map((r) => [(r.payload ?? r).id as string, (r.payload ?? r).agent_path as string]),
    );
    const relations = deriveRelations({ calls: attributed, participants: participants as ParticipantUsage[], agentPaths, delivery: codexDelivery });
    for (const r of relations) expect(checkValue(Relation, r)).toEqual([]);
    const types = relations.map((r) => r.type);
    // delivery: the wait_agent output naming the child (v1) or the child's FINAL_ANSWER agent_message (v2)
    expect(types.filter((t) => t === 'result_delivered')).toHaveLength(1);
    expect(types.filter((t) => t === 'spawn')).toHaveLength(1);
    expect(relations.find((r) => r.type === 'spawn')!.status).toBe('established');
    expect(types).toContain('child_completed');
    expect(types).toContain('launch_acknowledged');
    expect(types.filter((t) => t === 'launch_ack_in_context').length).toBeGreaterThanOrEqual(1);
    // The published capture validates, and the tree view shows root → child.
    const attempt = join(base, 'capture', 'attempt-0001');
    const manifest = await finalizeCapture({
      delivery: codexDelivery,
      dir: attempt,
      calls: attributed,
      participants: participants as ParticipantUsage[],
      harness: { name: 'codex', version: '0.171.0' },
      capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: false },
      attempt: 1,
      scope: 'e2e',
      debugRetention: 'on-error',
      agentPaths,
    });
    expect(checkValue(Manifest, manifest)).toEqual([]);
    expect(manifest).toMatchObject({ capture_status: 'complete', lifecycle: { status: 'complete' } });
    expect(await validateCapture(attempt)).toEqual([]);
    const { stdout: view } = await promisify(execFile)(rollerBin, ['view-capture', attempt]);
    expect(view).toMatch(/^codex 0\.171\.0 · capture complete/);
    expect(view).toMatch(/\n {4}child thread:\S+ \(completed, spawned by call_/);
    const conversion = JSON.parse(await readFile(join(out, 'conversion.json'), 'utf8')) as Json;
    const sftStatus = conversion.trajectory_conversion.find((t: Json) => t.target === 'sft');
    if (sftStatus.status === 'ok') expect(checkValue(SftRecord, JSON.parse(await readFile(join(out, 'trace_SFT.json'), 'utf8')))).toEqual([]);
    else expect(sftStatus.reason).toMatch(/\S/);
    expect(sftStatus.status).toBe('ok');
  }, 300_000);
});

describe('Codex multi-turn resume (e2e, real CLI)', () => {
  it('resumes the root thread by its confirmed id after a delegation, where the newest rollout is the child', async () => {
    const base = join(tmp.path, 'resume');
    const home = join(base, 'home');
    const work = join(base, 'work');
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'notes.txt'), 'The secret word is BLUEBIRD.\n');
    const proxy = await startRoller('proxy', '--upstream', e2e.modelUrl, '--out', join(base, 'capture'));
    const launch = { bin: e2e.bin, home, work, baseUrl: proxy.url, apiKey: 'dummy-codex-provider-key-42' };
    const first = await runProcess(await codexPlan({ ...launch, prompt: '[MAIN:wait] use a sub-agent to read notes.txt' }), {
      timeoutMs: 180_000,
      stdoutPath: join(base, 'turn1.jsonl'),
      stderrPath: join(base, 'turn1.err'),
    });
    expect(first.exitCode).toBe(0);
    // The confirmed root id: the thread the CLI started, from its own stdout.
    const started = (await readFile(join(base, 'turn1.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json).find((e) => e.type === 'thread.started');
    const rootId = started!.thread_id as string;
    const rollouts = (await rolloutRecords(home)).filter((r) => r.type === 'session_meta').map((r) => r.payload ?? r);
    const newest = [...rollouts].sort((a, b) => String(a.timestamp).localeCompare(String(b.timestamp))).at(-1);
    expect(newest.id).not.toBe(rootId); // --last would have resumed the child

    const second = await runProcess(await codexPlan({ ...launch, prompt: '[HELLO] one more question', resumeThreadId: rootId }), {
      timeoutMs: 180_000,
      stdoutPath: join(base, 'turn2.jsonl'),
      stderrPath: join(base, 'turn2.err'),
    });
    expect(second.exitCode, (await readFile(join(base, 'turn2.err'), 'utf8')).slice(-1500)).toBe(0);
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    const calls = (await readFile(join(base, 'capture', 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    const last = calls.at(-1)!;
    expect(last.native_identity.thread_id).toBe(rootId);
    expect(JSON.stringify(last.output)).toContain('Hello from the scripted model.');
    expect(await readFile(join(base, 'turn2.jsonl'), 'utf8')).toContain('Hello from the scripted model.');
  }, 300_000);
});
