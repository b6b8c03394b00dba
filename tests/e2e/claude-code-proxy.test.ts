/**
 * The real Claude Code CLI (2.1.332, installed by `roller harness install claude-code`) runs headless through
 * `roller proxy` against `roller scripted-model`, with no network. Four scenarios: one foreground sub-agent,
 * two parallel sub-agents in one response, a background sub-agent with its task-notification, and a run
 * without --forward-subagent-text. For each, every HTTP call's response id must be a native message.id, the
 * main ACTF must hold no sub-agent step, each participant's token sums must equal the usage the server sent
 * for its calls, and SFT must validate. If the CLI cannot be installed this fails, saying so.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { claudeCodeDelivery } from '../../src/harnesses/claude-code/delivery.js';
import { claudeCodePlan } from '../../src/harnesses/claude-code/launch.js';
import { runProcess } from '../../src/sources/process-runner.js';
import type { ParticipantUsage } from '../../src/harnesses/claude-code/participants.js';
import { Call as CallSchema, Manifest, Relation, SftRecord, checkValue, type Call } from '../../src/schemas/index.js';
import { attributeCalls, deriveRelations } from '../../src/transforms/capture/index.js';
import { finalizeCapture } from '../../src/pipelines/capture/index.js';
import { rollerBin } from '../support/paths.js';
import { useE2e } from '../support/e2e.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('e2e-cc');
const e2e = useE2e('claude-code');
const startRoller = e2e.startRoller;


async function nativeAssistantIds(configDir: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const entry of await readdir(join(configDir, 'projects'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
    for (const line of (await readFile(join(entry.parentPath, entry.name), 'utf8')).split('\n')) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line) as Json;
      if (rec.type === 'assistant' && rec.message?.id) ids.add(rec.message.id);
    }
  }
  return ids;
}

const scenarios = [
  { name: 'single foreground sub-agent', tag: '[MAIN:single]', forward: true, agents: 1, expect: 'BLUEBIRD', background: false },
  { name: 'two parallel sub-agents in one response', tag: '[MAIN:parallel]', forward: true, agents: 2, expect: 'BLUEBIRD', background: false },
  { name: 'a background sub-agent and its task-notification', tag: '[MAIN:background]', forward: true, agents: 1, expect: 'task-notification', background: true },
  { name: 'a run without --forward-subagent-text', tag: '[MAIN:single]', forward: false, agents: 1, expect: 'BLUEBIRD', background: false },
  { name: 'two sub-agents with identical prompts', tag: '[MAIN:identical]', forward: true, agents: 2, expect: 'BLUEBIRD', background: false },
  { name: 'a tool error inside a sub-agent', tag: '[MAIN:tool-error]', forward: true, agents: 1, expect: 'the tool failed', background: false },
];

describe('Claude Code through roller proxy (e2e, real CLI)', () => {
  it.each(scenarios)('$name', async (sc) => {
    const base = join(tmp.path, sc.name.replace(/\W+/g, '-'));
    const home = join(base, 'home');
    const work = join(base, 'demo');
    const capture = join(base, 'capture');
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'notes.txt'), 'The secret word is BLUEBIRD.\nSecond line of notes.\n');

    const proxy = await startRoller('proxy', '--upstream', e2e.modelUrl, '--out', capture);
    const apiKey = 'dummy-e2e-api-key-000111'; // the CLI sends it; no file may hold it
    const plan = await claudeCodePlan({
      bin: e2e.bin,
      prompt: `${sc.tag} Please delegate: have a sub-agent read notes.txt and tell me its first line.`,
      home,
      work,
      baseUrl: proxy.url,
      apiKey,
      forwardSubagentText: sc.forward,
    });
    const outcome = await runProcess(plan, { timeoutMs: 240_000, stdoutPath: join(base, 'stream.jsonl'), stderrPath: join(base, 'stderr.txt') });
    const stdout = await readFile(join(base, 'stream.jsonl'), 'utf8');
    expect(outcome.exitCode, `claude exited ${outcome.exitCode}; stderr: ${(await readFile(join(base, 'stderr.txt'), 'utf8')).slice(0, 2000)}`).toBe(0);
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');

    // 1. Every call is recorded, complete, and its response id is a native assistant message.id.
    const calls = (await readFile(join(capture, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    const modelCalls = calls.filter((c) => c.protocol === 'anthropic-messages');
    for (const c of calls) expect(checkValue(CallSchema, c)).toEqual([]);
    for (const c of modelCalls) expect(c).toMatchObject({ execution_status: 'completed', response_capture_status: 'complete' });
    const native = await nativeAssistantIds(join(home, '.claude'));
    for (const c of modelCalls) expect(native, `response ${c.response_id} (call ${c.seq}) is not a native message.id`).toContain(c.response_id);
    expect(new Set(modelCalls.map((c) => c.native_identity.agent_id).filter(Boolean)).size).toBe(sc.agents);

    // 2. Convert the native session with the wire.
    const out = join(base, 'converted');
    const conv = spawn(rollerBin, ['convert', '--harness', 'claude-code', '--native', join(home, '.claude'), '--out', out, '--wire', join(capture, 'calls.jsonl'), '--stream', join(base, 'stream.jsonl')], { stdio: 'inherit' });
    expect(((await once(conv, 'exit')) as [number])[0]).toBe(0);
    // The CLI's own stdout (second source) agrees with its native files.
    const conversion = JSON.parse(await readFile(join(out, 'conversion.json'), 'utf8')) as Json;
    expect(conversion.stream_check.problems).toEqual([]);
    const actf = JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')) as Json;
    const usage = JSON.parse(await readFile(join(out, 'usage.json'), 'utf8')) as Json;

    // 3. The main ACTF holds the main thread's messages only, every one of them.
    const mainCalls = modelCalls.filter((c) => !c.native_identity.agent_id);
    expect(actf.steps.map((s: Json) => s.native_ids.message_id).sort()).toEqual(mainCalls.map((c) => c.response_id).sort());
    expect(actf.system_prompt_source).toBe('wire');

    // 4. Each participant's tokens equal the sums of the usage the server sent on that participant's calls.
    const participants = usage.participants as Json[];
    expect(participants.filter((p) => p.role === 'child')).toHaveLength(sc.agents);
    for (const p of participants) {
      const mine = modelCalls.filter((c) => (p.role === 'root' ? !c.native_identity.agent_id : c.native_identity.agent_id === p.native_id));
      const sum = (k: string) => mine.reduce((a, c) => a + ((c.usage.reported as Json)[k] as number), 0);
      expect(p.tokens, `tokens of ${p.participant}`).toEqual({
        input: sum('input_tokens'),
        cache_creation: sum('cache_creation_input_tokens'),
        cache_read: sum('cache_read_input_tokens'),
        output: sum('output_tokens'),
        reasoning: 0,
      });
      if (p.role === 'child') expect(p).toMatchObject({ depth: 1, status: 'completed' });
    }

    // 5. Attribution by evidence and relations (capture protocol v1).
    const attributed = attributeCalls(modelCalls, participants as ParticipantUsage[]);
    for (const c of attributed) expect(c.identity_status, `call ${c.seq}`).toBe('attributed');
    expect(attributed.every((c) => c.export_status === 'exportable')).toBe(true);
    const relations = deriveRelations({ calls: attributed, participants: participants as ParticipantUsage[], delivery: claudeCodeDelivery });
    for (const r of relations) expect(checkValue(Relation, r)).toEqual([]);
    const count = (type: string) => relations.filter((r) => r.type === type && r.status === 'established').length;
    expect(count('spawn')).toBe(sc.agents);
    expect(count('child_completed')).toBe(sc.agents);
    if (sc.background) {
      expect(count('launch_acknowledged')).toBe(1);
      expect(count('launch_ack_in_context')).toBeGreaterThanOrEqual(1);
      // The launch acknowledgement is never completion: delivery comes only from the task-notification
      // that names the task and the tool use, in a later request of the main agent.
      expect(count('result_delivered')).toBe(1);
      const delivered = relations.find((r) => r.type === 'result_delivered')!;
      const carrier = attributed.find((c) => c.call_id === delivered.evidence[0]!.event_id)!;
      expect(JSON.stringify(carrier.context)).toContain('<task-notification>');
    } else {
      expect(count('result_delivered')).toBe(sc.agents);
      // every later parent call carries each result: one relation per (result, call)
      const laterParentCalls = attributed.filter((c) => c.participant_id === participants.find((p) => p.role === 'root')!.participant && c.seq > Math.min(...attributed.filter((x) => x.tool_refs.length > 0).map((x) => x.seq)));
      expect(count('result_in_context')).toBe(sc.agents * laterParentCalls.length);
    }

    // 6. The published capture: manifest valid, validate-capture passes, and one changed byte is caught.
    const attempt = join(base, 'capture', 'attempt-0001');
    const manifest = await finalizeCapture({
      delivery: claudeCodeDelivery,
      dir: attempt,
      calls: attributed,
      participants: participants as ParticipantUsage[],
      harness: { name: 'claude-code', version: '2.1.332' },
      capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: true },
      attempt: 1,
      scope: 'e2e',
      debugRetention: 'on-error',
      wireLog: join(capture, 'raw', 'wire.frames'),
    });
    expect(checkValue(Manifest, manifest)).toEqual([]);
    expect(manifest).toMatchObject({ capture_status: 'complete', lifecycle: { status: 'complete', pending_participant_ids: [] }, raw_retained: false });
    expect(manifest.participants.filter((p) => p.role === 'child')).toHaveLength(sc.agents);
    const check = async () => {
      try {
        const { stdout } = await promisify(execFile)(rollerBin, ['validate-capture', attempt]);
        return { code: 0, stdout };
      } catch (err) {
        return { code: (err as { code: number }).code, stdout: (err as { stdout: string }).stdout };
      }
    };
    expect(await check()).toEqual({ code: 0, stdout: `ok ${attempt}\n` });
    const bytes = await readFile(join(attempt, 'calls.jsonl'));
    const at = bytes.indexOf('"seq":') + 6;
    bytes[at] = bytes[at] === 0x30 ? 0x31 : 0x30; // one digit of one seq
    await writeFile(join(attempt, 'calls.jsonl'), bytes);
    const tampered = await check();
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/calls\.jsonl: sha256 [0-9a-f]{64} \(\d+ bytes\) differs from the manifest's [0-9a-f]{64} \(\d+ bytes\): the file was changed after publication/);

    // 7. SFT validates.
    const sft = JSON.parse(await readFile(join(out, 'trace_SFT.json'), 'utf8')) as unknown;
    expect(checkValue(SftRecord, sft)).toEqual([]);
    const result = stdout.trim().split('\n').map((l) => JSON.parse(l) as Json).filter((e) => e.type === 'result').at(-1);
    expect(result?.subtype).toBe('success');
    expect(JSON.stringify(actf)).toContain(sc.expect);
    if (sc.background) {
      // seeds/000 A9.2: the automatic notification stays the user's input in the main ACTF and SFT, wrapper included.
      const carrier = (actf.steps as Json[]).find((st) => JSON.stringify(st.user_content ?? '').includes('<task-notification>'));
      expect(carrier, 'an ACTF step whose user input is the notification').toBeDefined();
      const users = ((sft as Json).messages as Json[]).filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
      expect(users.some((u) => u.includes('<task-notification>') && u.includes('</task-notification>'))).toBe(true);
    }
    expect(await readFile(join(capture, 'calls.jsonl'), 'latin1')).not.toContain(apiKey);
  }, 300_000);
});
