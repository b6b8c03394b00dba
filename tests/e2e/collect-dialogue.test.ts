/**
 * `roller collect` of user-simulator tasks (seeds/003 §2.3): the scripted model plays both the Task Agent's model and
 * the simulated user; the real Claude Code and Codex CLIs hold the dialogue in one session.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRuns, DUMMY_KEY, filesUnder, info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { runChecks } from '../support/run-checks.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('collect-dialogue');
const { tasksFile } = collectRuns(tmp);
const { expectReprocessReproduces, expectAtifExport } = runChecks(tmp);
const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'tasks', 'dialogue.jsonl');

/** What the scripted server's usage objects add up to, in roller's normalised terms (input excludes cache reads). */
function sentTokens(usages: Json[]): { input: number; cached_input: number; output: number } {
  let input = 0;
  let cached = 0;
  let output = 0;
  for (const u of usages) {
    if ('prompt_tokens' in u) {
      cached += u.prompt_tokens_details?.cached_tokens ?? 0;
      input += u.prompt_tokens - (u.prompt_tokens_details?.cached_tokens ?? 0);
      output += u.completion_tokens;
    } else if ('input_tokens_details' in u) {
      cached += u.input_tokens_details.cached_tokens;
      input += u.input_tokens - u.input_tokens_details.cached_tokens;
      output += u.output_tokens;
    } else {
      cached += u.cache_read_input_tokens ?? 0;
      input += u.input_tokens;
      output += u.output_tokens;
    }
  }
  return { input, cached_input: cached, output };
}

describe('roller collect: a user simulator plays the user (examples/tasks/dialogue.jsonl)', () => {
  for (const harness of ['claude-code', 'codex', 'opencode', 'pi']) {
    it(`${harness}: three Task Agent turns in one session, ended by the simulator's stop; both participants recorded, sft.jsonl the Task Agent's only`, async () => {
      const out = join(tmp.path, 'dialogue-runs');
      const r = await roller(['collect', '--capture-calls', '--capture-debug', 'full', '--tasks', EXAMPLE, '--harness', harness, '--model', 'scripted/default', '--output', out, '--run-name', harness]);
      expect(r.code, r.stderr).toBe(0);
      // Each simulated turn is a line of its own while the sample runs (turns 2 and 3: the first is the task's prompt).
      expect(r.stderr.match(/^roller collect: 0_\S+: dialogue turn [23], the simulated user says ".+"$/gm)).toHaveLength(2);
      const run = join(out, harness);
      const v = await roller(['validate-run', run]);
      expect(v.code, v.stderr).toBe(0);
      const row = info(run).samples[0]!;
      const dir = join(run, row.path);
      const s = sample(run, row);
      expect(s.status).toBe('ok');

      // The visible dialogue, exactly: the task prompt, each reply the user saw, the simulator's two messages.
      const conversation = readJson<Json>(join(dir, 'conversation.json'));
      expect((conversation.turns as Json[]).map((t) => [t.role, t.source, t.turn, t.text])).toEqual([
        ['user', 'task', 1, '[HELLO] Hi! Can you greet me?'],
        ['assistant', 'task_agent', 1, 'Hello from the scripted model.'],
        ['user', 'user_simulator', 2, '[HELLO] Thanks. You said: Hello from the scripted model. Say hello once more.'],
        ['assistant', 'task_agent', 2, 'Hello from the scripted model.'],
        ['user', 'user_simulator', 3, '[WRITE] Now write hi into hello.txt, please.'],
        ['assistant', 'task_agent', 3, 'Done: hello.txt written.'],
      ]);
      expect(conversation.termination).toEqual({ reason: 'simulator_stop', after_turn: 3, detail: null });
      expect(conversation.pending_instructions).toEqual([]);
      expect(conversation.models).toEqual({ task_agent: 'scripted/default', user_simulator: 'scripted/default' });
      // Nothing hidden reaches it: no reasoning, no tool call or result (the write went through a tool).
      expect(JSON.stringify(conversation)).not.toMatch(/A greeting is all that is asked|tool_use|function_call|hello\.txt containing/);

      // The Task Agent's native session holds the three user messages, in order, in one session.
      const actf = readJson<Json>(join(dir, 'trace_ACTF.json'));
      expect((actf.steps as Json[]).filter((x) => x.user_content !== null).map((x) => x.user_content)).toEqual((conversation.turns as Json[]).filter((t) => t.role === 'user').map((t) => t.text));
      expect(readFileSync(join(dir, 'results', 'hello.txt'), 'utf8')).toBe('hi\n');

      // The simulator: its own raw events, calls, ACTF, SFT and info; its answers are what conversation.json shows.
      const simInfo = readJson<Json>(join(dir, 'user_simulator', 'info.json'));
      expect(simInfo).toMatchObject({ status: 'ok', error: null, model: 'scripted/default', messages: 3, termination: conversation.termination });
      const simSft = readJson<Json>(join(dir, 'user_simulator', 'trace_SFT.json'));
      expect((simSft.messages as Json[]).map((m) => [m.role, m.content])).toEqual([
        ['system', expect.stringContaining('[SIM:three]')],
        ['user', 'Hello from the scripted model.'],
        ['assistant', '[HELLO] Thanks. You said: Hello from the scripted model. Say hello once more.'],
        ['user', 'Hello from the scripted model.'],
        ['assistant', '[WRITE] Now write hi into hello.txt, please.'],
        ['user', 'Done: hello.txt written.'],
        ['assistant', '[[DONE]]'],
      ]);

      // Each side's tokens are what the scripted server sent it: the simulator's from the responses its client got
      // (and the proxy recorded), the Task Agent's from the harness's captured calls.
      const events = readJsonl(join(dir, 'user_simulator', 'trace.jsonl'));
      const simSent = sentTokens(events.filter((e) => e.type === 'response').map((e) => e.body.usage as Json));
      expect(simInfo.usage).toMatchObject({ ...simSent, requests: 3 });
      expect(sentTokens(readJsonl(join(dir, 'user_simulator', 'calls.jsonl')).map((c) => c.usage.reported as Json))).toEqual(simSent);
      const agentCalls = readJsonl(join(dir, 'capture', 'attempt-0001', 'calls.jsonl'));
      // OpenCode's title request (no tools offered) writes no session message: its tokens come in as an auxiliary call.
      const titleCalls = agentCalls.filter((c) => !Array.isArray(c.context.tools));
      expect(((s.runtime as Json).auxiliary_calls ?? []).map((a: Json) => a.call_id)).toEqual(harness === 'opencode' ? titleCalls.map((c) => c.call_id) : []);
      expect(titleCalls).toHaveLength(harness === 'opencode' ? 1 : 0);
      expect(s.usage).toMatchObject({ ...sentTokens(agentCalls.map((c) => c.usage.reported as Json)), requests: agentCalls.length });
      const runtime = s.runtime as Json;
      expect(runtime.user_simulator).toMatchObject({ path: 'user_simulator/info.json', status: 'ok', usage: simInfo.usage });
      expect(runtime.total_usage).toEqual({ input: s.usage!.input + simSent.input, cached_input: s.usage!.cached_input + simSent.cached_input, cache_creation: s.usage!.cache_creation, output: s.usage!.output + simSent.output, reasoning: s.usage!.reasoning, requests: s.usage!.requests + 3 });

      // sft.jsonl: the Task Agent's record only.
      const lines = readJsonl(join(run, 'sft.jsonl'));
      expect(lines).toEqual([readJson<Json>(join(dir, 'trace_SFT.json'))]);
      expect(JSON.stringify(lines)).not.toContain('[SIM:three]');
      // No credential anywhere (the simulator's client sent one too).
      for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);
      const atif = await expectAtifExport(run);
      expect(JSON.stringify(atif)).not.toContain('[SIM:three]');
      await expectReprocessReproduces(run);

      // Resume reuses the sample only while its dialogue files hold; an altered conversation is run again.
      const again = await roller(['collect', '--capture-calls', '--capture-debug', 'full', '--resume', '--tasks', EXAMPLE, '--harness', harness, '--model', 'scripted/default', '--output', out, '--run-name', harness]);
      expect(again.code, again.stderr).toBe(0);
      expect(info(run).samples[0]!.status).toBe('skipped');
      await writeFile(join(dir, 'conversation.json'), JSON.stringify({ ...conversation, turns: (conversation.turns as Json[]).map((t, i) => (i === 2 ? { ...t, text: 'edited' } : t)) }));
      const bad = await roller(['validate-run', run]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr + bad.stdout).toContain('conversation.json: the simulator message of turn 2 is not an answer its trace.jsonl holds');
      const rerun = await roller(['collect', '--capture-calls', '--capture-debug', 'full', '--resume', '--tasks', EXAMPLE, '--harness', harness, '--model', 'scripted/default', '--output', out, '--run-name', harness]);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(info(run).samples[0]!.status).toBe('ok');
      expect((await roller(['validate-run', run])).code).toBe(0);
    }, 8 * 60_000);
  }
});

describe('roller collect: how a simulated dialogue fails or stops (Claude Code)', () => {
  it('the Task Agent crashes in turn 2 (SIGKILLed by its own tool): the sample is an error, the dialogue ends task_agent_failed, both sides kept', async () => {
    const tasks = await tasksFile('crash.jsonl', [{ id: 'crash', prompt: '[HELLO] Hi!', user_simulator: { model: 'scripted/default', instructions: '[SIM:crash] You want a health check run.' } }]);
    const out = join(tmp.path, 'failure-runs');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'crash']);
    expect(r.code, r.stderr).toBe(1); // a sample failed
    const run = join(out, 'crash');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const row = info(run).samples[0]!;
    const dir = join(run, row.path);
    const s = sample(run, row);
    expect(s.status).toBe('error');
    expect(s.error).toMatchObject({ code: 'ROLLER_HARNESS_FAILED', message: expect.stringContaining('SIGKILL') });
    const conversation = readJson<Json>(join(dir, 'conversation.json'));
    expect((conversation.turns as Json[]).map((t) => t.text)).toEqual(['[HELLO] Hi!', 'Hello from the scripted model.', '[CRASH] Please run the health check.']);
    expect(conversation.termination).toMatchObject({ reason: 'task_agent_failed', after_turn: 2 });
    // The Task Agent's evidence stays (raw, ACTF; no SFT); the simulator succeeded and keeps its own.
    expect(existsSync(join(dir, 'trace.jsonl'))).toBe(true);
    expect(existsSync(join(dir, 'trace_ACTF.json'))).toBe(true);
    expect(existsSync(join(dir, 'trace_SFT.json'))).toBe(false);
    expect(readJson<Json>(join(dir, 'user_simulator', 'info.json'))).toMatchObject({ status: 'ok', messages: 1, termination: conversation.termination });
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
  }, 5 * 60_000);

  it('the turn limit: the dialogue ends at max_turns with the undelivered message pending; the sample is ok', async () => {
    const tasks = await tasksFile('limit.jsonl', [{ id: 'limit', prompt: '[HELLO] Hi!', user_simulator: { model: 'scripted/default', instructions: '[SIM:endless] You never stop asking.', max_turns: 2 } }]);
    const out = join(tmp.path, 'failure-runs');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--output', out, '--run-name', 'limit']);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, 'limit');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const dir = join(run, info(run).samples[0]!.path);
    expect(sample(run, info(run).samples[0]!).status).toBe('ok');
    const conversation = readJson<Json>(join(dir, 'conversation.json'));
    expect((conversation.turns as Json[]).map((t) => t.text)).toEqual(['[HELLO] Hi!', 'Hello from the scripted model.', '[HELLO] Tell me more.', 'Hello from the scripted model.']);
    expect(conversation.termination).toEqual({ reason: 'max_turns', after_turn: 2, detail: 'the task allows 2 Task Agent turn(s)' });
    expect(conversation.pending_instructions).toEqual(['[HELLO] Tell me more.']);
    expect(readJsonl(join(run, 'sft.jsonl'))).toHaveLength(1);
  }, 5 * 60_000);

  it("the simulator's model refuses connections: refused before anything runs, or, once it goes down mid-run, the sample is an error that says so", async () => {
    // A model API that answers roller's preflight, then stops listening: later connections are refused.
    const server = createServer((req, res) => {
      res.end();
      server.close();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const models = join(tmp.path, 'sim-models.json');
    await writeFile(models, JSON.stringify({ models: { 'gone/simulator': { api_base: base } } }));
    const tasks = await tasksFile('refused.jsonl', [{ id: 'refused', prompt: '[HELLO] Hi!', user_simulator: { model: 'gone/simulator', instructions: 'You want a greeting.' } }]);
    const out = join(tmp.path, 'failure-runs');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model-config', models, '--output', out, '--run-name', 'refused']);
    expect(r.code, r.stderr).toBe(1); // a sample failed
    const run = join(out, 'refused');
    expect((await roller(['validate-run', run])).code).toBe(0);
    const row = info(run).samples[0]!;
    const dir = join(run, row.path);
    const s = sample(run, row);
    expect(s.status).toBe('error');
    expect(s.error).toMatchObject({ code: 'ROLLER_USER_SIMULATOR_FAILED', message: expect.stringMatching(/user simulator \(gone\/simulator\), after Task Agent turn 1: .*HTTP 502.*could not be reached.*ECONNREFUSED/) });
    const conversation = readJson<Json>(join(dir, 'conversation.json'));
    expect(conversation.termination).toMatchObject({ reason: 'simulator_failed', after_turn: 1 });
    expect((conversation.turns as Json[]).map((t) => t.text)).toEqual(['[HELLO] Hi!', 'Hello from the scripted model.']);
    const simInfo = readJson<Json>(join(dir, 'user_simulator', 'info.json'));
    expect(simInfo).toMatchObject({ status: 'error', error: { code: 'ROLLER_USER_SIMULATOR_FAILED' }, messages: 0, trajectory: { sft: null } });
    expect(existsSync(join(dir, 'user_simulator', 'trace_SFT.json'))).toBe(false);
    // The Task Agent's turn is kept as evidence, out of sft.jsonl.
    expect(existsSync(join(dir, 'trace_ACTF.json'))).toBe(true);
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');

    // Down before the run: nothing runs, and the error names the task file and the simulator's model.
    const again = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model-config', models, '--output', out, '--run-name', 'refused-early']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`user_simulator.model gone/simulator (${tasks}): the model API at ${base} cannot be reached (ECONNREFUSED); nothing was run`);
    expect(existsSync(join(out, 'refused-early'))).toBe(false);
  }, 5 * 60_000);

  it('a harness that cannot continue a session is refused before anything runs', async () => {
    const tasks = await tasksFile('openclaw-dialogue.jsonl', [{ id: 'd', prompt: '[HELLO] Hi!', user_simulator: { model: 'scripted/default', instructions: '[SIM:three]' } }]);
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'openclaw', '--output', join(tmp.path, 'refused-runs')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${tasks}: task 'd' has a user_simulator; a simulated dialogue reads each reply from the harness's stdout and continues its session, implemented for claude-code, codex, opencode and pi in this version, not openclaw`);
  });
});
