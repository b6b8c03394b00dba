/**
 * Every harness on an API model (issue 60): `roller scripted-model` served on its own port as a provider's API — it
 * asks for a key (the one in an environment variable only roller's proxy holds) and serves one model name — and each
 * harness's demo tasks collected through --model-config in one run beside the embedded model's, so participants,
 * tokens, relations and SFT can be compared sample by sample. Then the provider failing, per protocol: 401, 429 with
 * retry-after, 500, a stream cut mid-answer, an unknown model name.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparableRun } from '../support/comparable-run.js';
import { collectRuns, info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { filesHolding } from '../support/files-holding.js';
import { rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('api-models');
const { tasksFile } = collectRuns(tmp);
const KEY = `sk-e2e-${Date.now().toString(36)}-provider-key-${Math.random().toString(36).slice(2)}`;
/**
 * The served models' names: what each harness asks the embedded model for, so both runs' requests (and so their tokens,
 * system prompts and prices) are equal — roller's provider configs name `scripted-model`; Claude Code 2.1.332 and dsh
 * 0.1.0-rc.8 ask for their own defaults.
 */
const SERVED = 'scripted-model';
const CLAUDE_DEFAULT = 'claude-opus-5-5';
const DSH_DEFAULT = 'deepseek-v4-flash';
const env = { ...process.env, ROLLER_E2E_API_KEY: KEY, ROLLER_E2E_WRONG_KEY: 'sk-e2e-wrong-key-0000' };
const state = { provider: undefined as ChildProcess | undefined, url: '', models: '' };

beforeAll(async () => {
  for (const h of ['claude-code', 'codex', 'opencode', 'pi', 'openclaw', 'deepseek']) await promisify(execFile)(rollerBin, ['harness', 'install', h], { timeout: 15 * 60_000 });
  const child = spawn(rollerBin, ['scripted-model', '--require-key-env', 'ROLLER_E2E_API_KEY', '--models', [SERVED, CLAUDE_DEFAULT, DSH_DEFAULT].join(','), '--max-requests', '5000'], { stdio: ['ignore', 'pipe', 'inherit'], env });
  state.provider = child;
  state.url = ((await once(createInterface({ input: child.stdout! }), 'line')) as [string])[0];
  const entry = (protocol: string, extra: Json = {}) => ({ api_base: protocol === 'anthropic-messages' ? state.url : `${state.url}/v1`, api_key_env: 'ROLLER_E2E_API_KEY', model: SERVED, protocol, ...extra });
  state.models = join(tmp.path, 'models.json');
  await writeFile(
    state.models,
    JSON.stringify({
      models: {
        'api/chat': entry('openai-chat-completions', { headers: { 'HTTP-Referer': 'https://roller.test/e2e' } }),
        'api/anthropic': entry('anthropic-messages'),
        'api/claude': entry('anthropic-messages', { model: CLAUDE_DEFAULT }),
        'api/dsh': entry('openai-chat-completions', { model: DSH_DEFAULT }),
        'api/responses': entry('openai-responses'),
        'wrong-key/chat': entry('openai-chat-completions', { api_key_env: 'ROLLER_E2E_WRONG_KEY' }),
        'wrong-key/anthropic': entry('anthropic-messages', { api_key_env: 'ROLLER_E2E_WRONG_KEY' }),
        'wrong-key/responses': entry('openai-responses', { api_key_env: 'ROLLER_E2E_WRONG_KEY' }),
        'unknown/chat': entry('openai-chat-completions', { model: 'no-such-model' }),
        'unknown/anthropic': entry('anthropic-messages', { model: 'no-such-model' }),
        'unknown/responses': entry('openai-responses', { model: 'no-such-model' }),
      },
    }),
  );
}, 20 * 60_000);
afterAll(() => void state.provider?.kill('SIGKILL'));

const NOTES = { 'notes.txt': 'The secret word is BLUEBIRD.\n' };
const HELLO = { id: 'hello', prompt: '[HELLO] Say hello.' };
const WRITE = { id: 'write', prompt: '[WRITE] Write hi into hello.txt.', output_dirs: ['.'] };
const delegate = (tag = 'single') => ({ id: 'delegate', prompt: `[MAIN:${tag}] Use a sub-agent to read notes.txt.`, files: NOTES });

/** One run of the tasks on the embedded model and on the API models (concurrency 2: two samples call the API at once). */
async function collectBoth(name: string, harness: string, tasks: object[], apiModels: string[], extra: string[] = []): Promise<string> {
  const out = join(tmp.path, 'runs');
  const models = ['scripted/default', ...apiModels].flatMap((m) => ['--model', m]);
  const r = await roller(['collect', '--capture-calls', '--tasks', await tasksFile(`${name}.jsonl`, tasks), '--harness', harness, ...models, '--model-config', state.models, '--output', out, '--run-name', name, '--concurrency', '2', ...extra], { env });
  expect(r.code, r.stderr).toBe(0);
  const run = join(out, name);
  const valid = await roller(['validate-run', run]);
  expect(valid.code, valid.stderr).toBe(0);
  return run;
}

/** Sample rows of one model of the run, comparable with another model's (the model's own id masked). */
function ofModel(run: string, model: string): Json[] {
  const rows = info(run).samples;
  return comparableRun(run).filter((_, i) => rows[i]!.model === model);
}

/** What every API run must hold: the key in no file, each call answered, upstream paths as the provider serves them, the lock's model. */
function expectApiRecorded(run: string, apiModels: string[], served = SERVED): void {
  expect(filesHolding(KEY, [run])).toEqual([]);
  const lock = readJson<Json>(join(run, 'lock.json'));
  for (const m of apiModels) {
    expect(lock.models[m]).toMatchObject({ model: served, protocol: expect.any(String), api_key_env: 'ROLLER_E2E_API_KEY' });
    expect(JSON.stringify(lock.models[m])).not.toContain(KEY);
  }
  for (const row of info(run).samples.filter((s) => apiModels.includes(s.model))) {
    expect(row.status, `${row.task_id} ${row.model}`).toBe('ok');
    const protocol = lock.models[row.model].protocol as string;
    const calls = readJsonl(join(run, row.path, 'capture', 'attempt-0001', 'calls.jsonl'));
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c.http_status, `${row.task_id} call ${c.seq}`).toBe(200);
      expect(c.request_model).toBe(served);
      // An OpenAI-protocol api_base ends at /v1: the harness's own /v1 is the base's (never /v1/v1).
      expect(c.upstream_path).toMatch(protocol === 'anthropic-messages' ? /^\/v1\/messages/ : protocol === 'openai-responses' ? /^\/v1\/responses$/ : /^\/v1\/chat\/completions$/);
    }
  }
}

describe('every harness collects its demo tasks from an API model (roller scripted-model on its own port, with a key)', () => {
  it('Claude Code on Anthropic Messages: the same participants, tokens, relations and SFT as on the embedded model', async () => {
    const run = await collectBoth('claude-code', 'claude-code', [HELLO, WRITE, delegate()], ['api/claude']);
    expectApiRecorded(run, ['api/claude'], CLAUDE_DEFAULT);
    expect(ofModel(run, 'api/claude')).toEqual(ofModel(run, 'scripted/default'));
  }, 10 * 60_000);

  it('Codex on Responses, multi-agent v1 and v2: the same as on the embedded model', async () => {
    const run = await collectBoth('codex', 'codex', [HELLO, WRITE, delegate('wait')], ['api/responses']);
    expectApiRecorded(run, ['api/responses']);
    expect(ofModel(run, 'api/responses')).toEqual(ofModel(run, 'scripted/default'));
    const v2 = await collectBoth('codex-v2', 'codex', [delegate('wait')], ['api/responses'], ['--codex-multi-agent', 'v2']);
    expectApiRecorded(v2, ['api/responses']);
    expect(ofModel(v2, 'api/responses')).toEqual(ofModel(v2, 'scripted/default'));
    expect((sample(v2, info(v2).samples[1]!).runtime.participants as Json[]).map((p) => p.role)).toEqual(['root', 'child']);
  }, 10 * 60_000);

  it('OpenCode on Chat Completions (its own), and on Anthropic Messages and Responses through its bundled providers', async () => {
    // (Its write task on an API model is the docker e2e's.)
    const run = await collectBoth('opencode', 'opencode', [HELLO, delegate()], ['api/chat', 'api/anthropic', 'api/responses']);
    expectApiRecorded(run, ['api/chat', 'api/anthropic', 'api/responses']);
    const embedded = ofModel(run, 'scripted/default');
    expect(ofModel(run, 'api/chat')).toEqual(embedded);
    // Another protocol is another request body (so other token counts): the same tree, relations and statuses.
    const shape = (rows: Json[]) => rows.map((r) => ({ task: r.task, status: r.status, roles: r.participants.map((p: Json) => `${p.role}:${p.status}`), relations: r.relations }));
    expect(shape(ofModel(run, 'api/anthropic'))).toEqual(shape(embedded));
    expect(shape(ofModel(run, 'api/responses'))).toEqual(shape(embedded));
  }, 10 * 60_000);

  it('Pi with its example sub-agent extension, on Chat Completions and Anthropic Messages', async () => {
    const tasks = [HELLO, WRITE, { ...delegate(), prompt: '[MAIN:single] Use the subagent tool to read notes.txt.' }];
    const run = await collectBoth('pi', 'pi', tasks, ['api/chat', 'api/anthropic'], ['--pi-subagent-extension']);
    expectApiRecorded(run, ['api/chat', 'api/anthropic']);
    expect(ofModel(run, 'api/chat')).toEqual(ofModel(run, 'scripted/default'));
    const roles = (rows: Json[]) => rows.map((r) => [r.task, r.status, r.participants.map((p: Json) => p.role), r.relations]);
    expect(roles(ofModel(run, 'api/anthropic'))).toEqual(roles(ofModel(run, 'scripted/default')));
    // The system prompt and tools of an Anthropic request, read into the ACTF as every protocol's are.
    const anthropicWrite = info(run).samples.find((s) => s.model === 'api/anthropic' && s.task_id === 'write')!;
    const actf = readJson<Json>(join(run, anthropicWrite.path, 'trace_ACTF.json'));
    expect(actf).toMatchObject({ system_prompt_source: 'wire', tools_source: 'wire' });
    expect(actf.tools.every((t: Json) => t.type === 'function' && typeof t.function.name === 'string')).toBe(true);
  }, 10 * 60_000);

  it('OpenClaw through its Gateway on Chat Completions (the same as on the embedded model), Anthropic Messages and Responses (its rewritten tool ids and completion events joined as on Chat)', async () => {
    // (Its greeting on an API model is the docker e2e's and the --thinking test's.)
    const run = await collectBoth('openclaw', 'openclaw', [delegate()], ['api/chat', 'api/anthropic', 'api/responses'], ['--concurrency', '4']);
    expectApiRecorded(run, ['api/chat', 'api/anthropic', 'api/responses']);
    const embedded = ofModel(run, 'scripted/default');
    expect(ofModel(run, 'api/chat')).toEqual(embedded);
    const shape = (rows: Json[]) => rows.map((r) => ({ task: r.task, status: r.status, roles: r.participants.map((p: Json) => `${p.role}:${p.status}`), relations: r.relations, sft: r.sft !== null }));
    for (const other of ['api/anthropic', 'api/responses']) expect(shape(ofModel(run, other)), other).toEqual(shape(embedded));
    for (const row of info(run).samples) expect(readJson<Json>(join(run, row.path, 'capture', 'attempt-0001', 'manifest.json')).capture_status, `${row.model} ${row.task_id}`).toBe('complete');
  }, 10 * 60_000);

  it("dsh on Chat Completions, the model named in its agent-default-model row: the same as on the embedded model", async () => {
    const run = await collectBoth('deepseek', 'deepseek', [HELLO, WRITE, delegate()], ['api/dsh']);
    expectApiRecorded(run, ['api/dsh'], DSH_DEFAULT);
    expect(ofModel(run, 'api/dsh')).toEqual(ofModel(run, 'scripted/default'));
  }, 10 * 60_000);
});

describe('--thinking on an API model, audited on the wire', () => {
  it("Pi, OpenCode and OpenClaw send the level in each protocol's own control (Pi's Anthropic budget alone is unverified, as seeds/003 says)", async () => {
    const out = join(tmp.path, 'runs');
    const audits = async (name: string, harness: string, models: string[]) => {
      const r = await roller(['collect', '--capture-calls', '--tasks', await tasksFile(`${name}.jsonl`, [HELLO]), '--harness', harness, ...models.flatMap((m) => ['--model', m]), '--model-config', state.models, '--output', out, '--run-name', name, '--thinking', 'high', '--concurrency', '3'], { env });
      expect(r.code, r.stderr).toBe(0);
      return Object.fromEntries(info(join(out, name)).samples.map((row) => [row.model, (sample(join(out, name), row).runtime as Json).wire_effort_audit]));
    };
    const pi = await audits('pi-thinking', 'pi', ['api/chat', 'api/responses', 'api/anthropic']);
    expect(pi['api/chat']).toMatchObject({ status: 'matched', requested: 'high', observed: ['high'], source: 'wire' });
    expect(pi['api/responses']).toMatchObject({ status: 'matched', observed: ['high'] });
    expect(pi['api/anthropic']).toMatchObject({ status: 'unverified', requested: 'high' });
    // OpenCode: a variant of roller's model; its title requests at the same level (its small model would ask for 'low').
    const opencode = await audits('opencode-thinking', 'opencode', ['api/chat', 'api/responses', 'api/anthropic']);
    for (const m of ['api/chat', 'api/responses', 'api/anthropic']) expect(opencode[m], m).toMatchObject({ status: 'matched', requested: 'high', observed: ['high', 'high'] });
    const openclaw = await audits('openclaw-thinking', 'openclaw', ['api/chat']);
    expect(openclaw['api/chat']).toMatchObject({ status: 'matched', requested: 'high', observed: ['high'] });
  }, 10 * 60_000);
});

describe('roller verify on an API model', () => {
  it('Codex passes its acceptance scenarios on the served model (its reader role on the API model too); with a wrong key every scenario fails', async () => {
    const r = await roller(['verify', '--harness', 'codex', '--model', 'api/responses', '--model-config', state.models], { env });
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stderr).toMatch(/^10 passed, 0 failed, 1 not applicable, 0 not run$/m);
    const wrong = await roller(['verify', '--harness', 'codex', '--model', 'wrong-key/responses', '--model-config', state.models], { env });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^0 passed, \d+ failed/m);
  }, 10 * 60_000);
});

describe('the provider failing: each a sample error naming the call and the upstream status, retries recorded as calls', () => {
  const failing = [
    { id: 'r429', prompt: '[UPSTREAM-429] Say hello.' },
    { id: 'r500', prompt: '[UPSTREAM-500] Say hello.' },
    { id: 'cut', prompt: '[UPSTREAM-CUT] Say hello.' },
  ];
  /** Each sample's error, and the statuses of its calls in order. */
  function outcomes(run: string): Record<string, { status: string; message: string; calls: (number | null)[] }> {
    return Object.fromEntries(
      info(run).samples.map((row) => {
        const calls = readJsonl(join(run, row.path, 'capture', 'attempt-0001', 'calls.jsonl'));
        return [`${row.model} ${row.task_id}`, { status: row.status, message: row.error?.message ?? '', calls: calls.map((c) => c.http_status as number | null) }];
      }),
    );
  }

  it('Pi (which exits 0 on them) on each protocol: 429, 500, a cut stream, a wrong key, an unknown model — one run, the 27 samples at once', async () => {
    const out = join(tmp.path, 'runs');
    const protocols = [['chat', '/v1/chat/completions'], ['anthropic', '/v1/messages'], ['responses', '/v1/responses']] as const;
    const models = protocols.flatMap(([short]) => [`api/${short}`, `wrong-key/${short}`, `unknown/${short}`]).flatMap((m) => ['--model', m]);
    // Most of each sample is Pi waiting out its retry backoff: they wait together.
    const r = await roller(['collect', '--capture-calls', '--tasks', await tasksFile('failing.jsonl', failing), '--harness', 'pi', ...models, '--model-config', state.models, '--output', out, '--run-name', 'failing', '--concurrency', '9', '--timeout', '120'], { env });
    expect(r.code).toBe(1);
    const run = join(out, 'failing');
    const valid = await roller(['validate-run', run]);
    expect(valid.code, `${valid.stdout}\n${valid.stderr}`).toBe(0);
    const got = outcomes(run);
    for (const [short, path] of protocols) {
      const at = (id: string) => got[`api/${short} ${id}`]!;
      // Pi retries a 429 and a 500 (each retry a call of its own), then gives up and exits 0: the sample is an error all the same.
      for (const [id, status] of [['r429', 429], ['r500', 500]] as const) {
        expect(at(id).status, `${short} ${id}`).toBe('error');
        expect(at(id).calls.length).toBeGreaterThan(1);
        expect(at(id).calls.every((s) => s === status)).toBe(true);
        expect(at(id).message).toMatch(new RegExp(`the model API failed call ${at(id).calls.length - 1} \\(POST ${path}[^,]*, HTTP ${status}\\): HTTP ${status} \\(.*scripted model: .*\\); ${at(id).calls.length - 1} earlier calls? of this attempt failed too`));
      }
      expect(at('cut'), `${short} cut`).toMatchObject({ status: 'error', message: expect.stringMatching(/failed call \d+ .*the response was cut/) });
      // A wrong key and an unknown model: one call each, answered 401 and 404, no retry.
      for (const [model, status] of [[`wrong-key/${short}`, 401], [`unknown/${short}`, 404]] as const) {
        for (const id of ['r429', 'r500', 'cut']) {
          const o = got[`${model} ${id}`]!;
          expect(o.status, `${model} ${id}`).toBe('error');
          expect(o.calls.every((s) => s === status)).toBe(true);
          expect(o.message).toContain(`HTTP ${status}`);
        }
      }
    }
    expect(readFileSync(join(run, 'sft.jsonl'), 'utf8')).toBe('');
  }, 10 * 60_000);

  it('Codex (Responses, no retries in roller profile) and Claude Code (an unknown model, which it does not retry for long) end the same way', async () => {
    const out = join(tmp.path, 'runs');
    const codex = await roller(['collect', '--capture-calls', '--tasks', await tasksFile('codex-failing.jsonl', failing), '--harness', 'codex', '--model', 'api/responses', '--model', 'unknown/responses', '--model-config', state.models, '--output', out, '--run-name', 'codex-failing', '--concurrency', '3'], { env });
    expect(codex.code).toBe(1);
    const got = outcomes(join(out, 'codex-failing'));
    expect(got['api/responses r429']).toMatchObject({ status: 'error', calls: [429], message: expect.stringContaining('the model API failed call 0 (POST /v1/responses, HTTP 429): HTTP 429 (rate_limit_error: scripted model: rate limit reached for requests)') });
    expect(got['api/responses r500']).toMatchObject({ status: 'error', calls: [500] });
    expect(got['api/responses cut']!.message).toMatch(/the response was cut/);
    expect(got['unknown/responses r429']).toMatchObject({ status: 'error', calls: [404], message: expect.stringContaining("the model 'no-such-model' does not exist") });
    // (Claude Code retries a 401, a 429 and a 500 about ten times with backoff: those end at --timeout, their cause named.)
    const claude = await roller(['collect', '--capture-calls', '--tasks', await tasksFile('claude-unknown.jsonl', [HELLO]), '--harness', 'claude-code', '--model', 'unknown/anthropic', '--model-config', state.models, '--output', out, '--run-name', 'claude-unknown', '--timeout', '120'], { env });
    expect(claude.code).toBe(1);
    const c = outcomes(join(out, 'claude-unknown'))['unknown/anthropic hello']!;
    expect(c.status).toBe('error');
    expect(c.calls.every((s) => s === 404)).toBe(true);
    expect(c.message).toMatch(/the harness exited 1; the model API failed call \d+ \(POST \/v1\/messages\?beta=true, HTTP 404\): HTTP 404 \(not_found_error: scripted model: the model 'no-such-model' does not exist/);
    for (const dir of [join(out, 'codex-failing'), join(out, 'claude-unknown')]) expect(filesHolding(KEY, [dir])).toEqual([]);
  }, 10 * 60_000);

  it('a base that does not answer is refused before anything runs; --model-config without --model is refused, naming its models', async () => {
    const dead = join(tmp.path, 'dead-models.json');
    await writeFile(dead, JSON.stringify({ models: { 'dead/chat': { api_base: 'http://127.0.0.1:9/v1', api_key_env: 'ROLLER_E2E_API_KEY' } } }));
    const tasks = await tasksFile('one.jsonl', [HELLO]);
    const out = join(tmp.path, 'refused');
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'opencode', '--model', 'dead/chat', '--model-config', dead, '--output', out], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--model dead\/chat: the model API at http:\/\/127\.0\.0\.1:9\/v1 cannot be reached \(ECONNREFUSED\); nothing was run/);
    const unnamed = await roller(['collect', '--tasks', tasks, '--harness', 'pi', '--model-config', state.models, '--output', out], { env });
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toMatch(/--model-config .* names api\/chat, .* but no --model was given, so the run would use only scripted\/default .*; pass --model api\/chat/);
    const wrongProtocol = await roller(['collect', '--tasks', tasks, '--harness', 'codex', '--model', 'api/chat', '--model-config', state.models, '--output', out], { env });
    expect(wrongProtocol.code).toBe(2);
    expect(wrongProtocol.stderr).toContain('--model api/chat: its protocol openai-chat-completions (--model-config) is not one codex speaks (openai-responses); nothing was run');
    expect(readFileSync(state.models, 'utf8')).not.toContain(KEY);
  }, 5 * 60_000);
});
