/**
 * The user simulator's parts (seeds/003 §2.3): the task block, each harness's visible reply, the scripted model
 * playing the user, the client over real HTTP through the recording proxy, and the dialogue checks on a real run's files.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replyOfStdout as claudeReply } from '../../src/harnesses/claude-code/reported.js';
import { replyOfStdout as codexReply } from '../../src/harnesses/codex/reported.js';
import * as opencode from '../../src/harnesses/opencode/reported.js';
import * as pi from '../../src/harnesses/pi/reported.js';
import { dialogueProblems } from '../../src/pipelines/collect/dialogue-checks.js';
import { simulatedPrompts } from '../../src/pipelines/collect/prompt-source.js';
import { UserSimulator } from '../../src/pipelines/collect/user-simulator.js';
import { simulatorActf, writeDialogueFiles } from '../../src/pipelines/collect/user-simulator-files.js';
import type { HarnessRunner } from '../../src/harnesses/adapter.js';
import { Task } from '../../src/schemas/task.js';
import { checkValue } from '../../src/schemas/validate.js';
import { Script } from '../../src/sources/scripted-model/script.js';
import { startScriptedModel, type ScriptedModelServer } from '../../src/sources/scripted-model/server.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('user-simulator');
const STDOUT = join(import.meta.dirname, '..', 'fixtures', 'dialogue', 'stdout');
const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'dialogue', 'claude-code-2.1.332');
const readJsonl = (path: string): Json[] => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);

describe('the task block', () => {
  it('defaults max_turns and the stop marker; refuses followups with a simulator, a zero limit and unknown keys', () => {
    const task = Task.parse({ id: 'd', prompt: 'Hi', user_simulator: { model: 'scripted/default', instructions: 'Be brief.' } });
    expect(task.user_simulator).toEqual({ model: 'scripted/default', instructions: 'Be brief.', max_turns: 5, stop: '[[DONE]]' });
    const messages = (v: unknown) => checkValue(Task, v).map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages({ id: 'd', prompt: 'Hi', followups: ['more'], user_simulator: { model: 'scripted/default', instructions: 'x' } })).toEqual(['user_simulator: a task has either followups (fixed) or a user_simulator (dynamic), not both']);
    expect(messages({ id: 'd', prompt: 'Hi', user_simulator: { model: 'scripted/default', instructions: 'x', max_turns: 0 } })[0]).toMatch(/^user_simulator\.max_turns: /);
    expect(messages({ id: 'd', prompt: 'Hi', user_simulator: { model: 'scripted/default', instructions: 'x', persona: 'y' } })).toEqual(['user_simulator.persona: unexpected field (not part of the schema)']);
  });
});

describe('the reply the user saw, from each harness stdout (real runs, tests/fixtures/dialogue/stdout)', () => {
  it('Claude Code: the last stream-json result; a cut line is no result', async () => {
    const stream = join(STDOUT, 'claude-code-stream.jsonl');
    const last = readJsonl(stream).filter((e) => e.type === 'result').at(-1)!;
    expect(await claudeReply(stream)).toBe(last.result);
    const lines = readFileSync(stream, 'utf8').trimEnd().split('\n');
    const cut = join(tmp.path, 'cut.jsonl');
    writeFileSync(cut, [...lines.filter((l) => !l.includes('"type":"result"')), lines.find((l) => l.includes('"type":"result"'))!.slice(0, 60)].join('\n'));
    expect(await claudeReply(cut)).toBeNull();
    expect(await claudeReply(join(tmp.path, 'absent.jsonl'))).toBeNull();
  });

  it("OpenCode: the root session's id and its last message's text parts (a task child's session is another)", async () => {
    const stdout = join(STDOUT, 'opencode-stdout.jsonl');
    expect(await opencode.sessionOfStdout(stdout)).toBe('ses_dd4c103b6ffe6xZUxoqZGpPCFe');
    const texts = readJsonl(stdout).filter((e) => e.type === 'text');
    expect(await opencode.replyOfStdout(stdout)).toBe(texts.at(-1)!.part.text);
    expect(await opencode.replyOfStdout(join(tmp.path, 'absent.jsonl'))).toBeNull();
  });

  it("Pi: the session header's id and the last assistant message with text (a tool-call-only message is not a reply)", async () => {
    const stdout = join(STDOUT, 'pi-stdout.jsonl');
    expect(await pi.sessionOfStdout(stdout)).toBe('01a22b3f-40c5-7025-b7e5-10a76cafa07c');
    expect(await pi.replyOfStdout(stdout)).toBe('All done. Tool result summary: first line: the quick brown fox second line: jumps over the lazy dog ');
  });

  it("Codex: the root thread's last agent_message (a delegation's items are not the reply)", async () => {
    expect(await codexReply(join(STDOUT, 'codex-exec.jsonl'))).toBe('ROOT-DONE: the sub-agent reported the content of hello.txt.');
  });
});

describe('the simulator client over real HTTP (scripted model, recording proxy)', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => void (await server?.close()));
  const script = Script.parse({
    scenarios: [{ name: 'sim', match: '[SIM:t]', match_in: 'system', turns: [{ text: 'Again, please.' }, { text: 'Thanks, that is all. [[END]]' }] }, { name: 'user-tag', match: 'Again', turns: [{ text: 'a user-tag answer' }] }],
    fallback: { text: 'fallback' },
  });
  const runner = (replies: string[]): HarnessRunner => ({ replyOfStdout: async (p: string) => replies[Number(p)] ?? null }) as unknown as HarnessRunner;

  it('answers from the system-named scenario by its own turn count; words said with the stop stay undelivered', async () => {
    server = await startScriptedModel({ script });
    const task = Task.parse({ id: 'd', prompt: 'Open', user_simulator: { model: 'scripted/x', instructions: '[SIM:t] A user.', stop: '[[END]]' } });
    const model = { id: 'scripted/x', kind: 'scripted', script, apiKey: 'k-dummy' } as const;
    const sim = await UserSimulator.start(task.user_simulator!, model, { url: server.url }, join(tmp.path, 'cap'), task.prompt, 10_000);
    const source = simulatedPrompts(task, sim, runner(['first reply', 'second reply']));
    // The Task Agent's reply quotes a user-message tag ("Again"): the system-named scenario still wins.
    expect(await source.next(0, '0')).toEqual({ kind: 'next', text: 'Again, please.' });
    sim.delivered('Again, please.', 2);
    expect(await source.next(1, '1')).toEqual({ kind: 'end' });
    expect(await sim.close()).toBeNull();
    expect(sim.termination).toEqual({ reason: 'simulator_stop', after_turn: 2, detail: null });
    expect(sim.pending).toEqual(['Thanks, that is all.']);
    const requests = sim.events.filter((e) => e.type === 'request').map((e) => (e as Json).body.messages.map((m: Json) => [m.role, m.content]));
    // The simulator's view: the Task Agent's replies are its user turns, its own messages its assistant turns.
    expect(requests[1].slice(1)).toEqual([['user', 'first reply'], ['assistant', 'Again, please.'], ['user', 'second reply']]);
    expect(requests[1][0][1]).toContain('Your first message to the assistant was:\nOpen');
    // Its files: the ACTF's tokens are the recorded calls', the SFT its answers as assistant turns.
    const out = join(tmp.path, 'sample');
    const info = await writeDialogueFiles(out, sim, { keepThinking: true, error: null, taskAgentModel: 'scripted/default' });
    expect(info).toMatchObject({ status: 'ok', messages: 2, usage: { requests: 2 } });
    expect(await dialogueProblems(out, { keepThinking: true })).toEqual([]);
  });

  it('a reply the harness never printed ends the dialogue as the Task Agent failing, without asking the simulator', async () => {
    server = await startScriptedModel({ script });
    const task = Task.parse({ id: 'd', prompt: 'Open', user_simulator: { model: 'scripted/x', instructions: '[SIM:t]' } });
    const sim = await UserSimulator.start(task.user_simulator!, { id: 'scripted/x', kind: 'scripted', script, apiKey: 'k' }, { url: server.url }, join(tmp.path, 'cap2'), task.prompt, 10_000);
    const next = await simulatedPrompts(task, sim, runner([])).next(0, '0');
    await sim.close();
    expect(next).toMatchObject({ kind: 'fail', code: 'ROLLER_HARNESS_FAILED' });
    expect(sim.termination?.reason).toBe('task_agent_failed');
    expect(server.answered).toBe(0);
  });
});

describe('dialogue checks on a real run (Claude Code 2.1.332, examples/tasks/dialogue.jsonl)', () => {
  const copy = (name: string) => {
    const dir = join(tmp.path, name);
    cpSync(FIXTURE, dir, { recursive: true });
    return dir;
  };

  it("the run's files hold, and its ACTF is what its raw events and calls give", async () => {
    expect(await dialogueProblems(copy('ok'), { keepThinking: true })).toEqual([]);
    const events = readJsonl(join(FIXTURE, 'user_simulator', 'trace.jsonl'));
    const system = events.find((e) => e.type === 'request')!.body.messages[0].content as string;
    const actf = simulatorActf(system, events as never, readJsonl(join(FIXTURE, 'user_simulator', 'calls.jsonl')) as never);
    expect(actf).toEqual(JSON.parse(readFileSync(join(FIXTURE, 'user_simulator', 'trace_ACTF.json'), 'utf8')));
  });

  it('an edited SFT, a cut raw line, a missing conversation each name their file', async () => {
    const sft = copy('sft');
    const record = JSON.parse(readFileSync(join(sft, 'user_simulator', 'trace_SFT.json'), 'utf8')) as Json;
    record.messages[2].content = 'edited';
    writeFileSync(join(sft, 'user_simulator', 'trace_SFT.json'), JSON.stringify(record));
    expect(await dialogueProblems(sft, { keepThinking: true })).toEqual(['user_simulator/trace_SFT.json: not the projection of its trace_ACTF.json']);

    const cut = copy('cut');
    const text = readFileSync(join(cut, 'user_simulator', 'trace.jsonl'), 'utf8');
    writeFileSync(join(cut, 'user_simulator', 'trace.jsonl'), text.slice(0, text.length - 40));
    expect((await dialogueProblems(cut, { keepThinking: true }))[0]).toMatch(/^user_simulator\/trace\.jsonl:\d+: not JSON/);

    const gone = copy('gone');
    rmSync(join(gone, 'conversation.json'));
    expect(await dialogueProblems(gone, { keepThinking: true })).toEqual(['conversation.json: missing']);
  });
});
