/**
 * `roller export --format otlp` (and the otlp sink in collect) on runs the real Claude Code and Codex made here, sent
 * to a receiver in the suite that decodes with OpenTelemetry's own generated protobuf code (and OTLP JSON): one trace
 * per sample; an invoke_agent span per agent, a sub-agent's under the execute_tool span of the call that spawned it;
 * a chat span per call with its recorded times and tokens; an execute_tool span per tool call, linked to the chat span
 * whose input carried its result; the agents' tokens equal `roller usage`. Content only on request; headers (keys)
 * reach the collector and nothing else; a collector that refuses or is not there is a clear error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunInfo } from '../../src/schemas/index.js';
import { collectRuns, filesUnder, readJson, roller } from '../support/collect-run.js';
import { startReceiver, type ReceivedSpan, type Receiver } from '../support/otlp-receiver.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;

const NOTES = { 'notes.txt': 'The secret word is BLUEBIRD.\nSecond line of notes.\n' };
const demoTasks = () => readFileSync(join(repoRoot, 'examples/tasks/demo.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);

/** Each sample's captured calls and relations, and its agent tree as `roller usage --json` prints it. */
async function recorded(run: string) {
  const usage = JSON.parse((await roller(['usage', run, '--json'])).stdout) as Json;
  const flat = (nodes: Json[]): Json[] => nodes.flatMap((n) => [n, ...flat(n.children ?? [])]);
  return readJson<RunInfo>(join(run, 'info.json')).samples.map((row) => {
    const info = readJson<Json>(join(run, row.path, 'info.json'));
    const capture = join(run, row.path, info.runtime.capture.path);
    const lines = (f: string) => readFileSync(join(capture, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    return { path: row.path, calls: lines('calls.jsonl'), relations: lines('relations.jsonl'), agents: flat((usage.samples as Json[]).find((s) => s.path === row.path)!.tree as Json[]) };
  });
}

const op = (s: ReceivedSpan) => s.attributes['gen_ai.operation.name'];

/** The received trace of a sample checked against what the run recorded of it. */
function checkTrace(spans: ReceivedSpan[], sample: Awaited<ReturnType<typeof recorded>>[number], run: string) {
  const root = spans.find((s) => s.parentSpanId === '')!;
  expect(spans.filter((s) => s.parentSpanId === '')).toHaveLength(1);
  expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'roller.sample': sample.path, 'roller.run': run.split('/').at(-1) });
  expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (const s of spans) if (s !== root) expect(byId.has(s.parentSpanId), `${s.name} has its parent in the trace`).toBe(true);

  // Agents: one span each, tokens as roller usage counts them (input_tokens: every input token, cache included).
  const agents = spans.filter((s) => op(s) === 'invoke_agent');
  const withCalls = new Set(sample.calls.map((c) => c.participant_id));
  const expectedAgents = sample.agents.filter((a) => withCalls.has(a.participant) || sample.agents.some((d) => d.depth > a.depth && withCalls.has(d.participant)) || a.role === 'root');
  expect(agents.map((a) => a.attributes['gen_ai.agent.id']).sort()).toEqual(expectedAgents.map((a) => a.participant).sort());
  for (const a of expectedAgents) {
    const span = agents.find((s) => s.attributes['gen_ai.agent.id'] === a.participant)!;
    const t = a.tokens as Json;
    expect(span.attributes, a.participant).toMatchObject({
      'gen_ai.usage.input_tokens': t.input + t.cache_read + t.cache_creation,
      'gen_ai.usage.cache_read.input_tokens': t.cache_read,
      'gen_ai.usage.cache_creation.input_tokens': t.cache_creation,
      'gen_ai.usage.output_tokens': t.output,
      'roller.usage.input': t.input,
      'roller.participant.depth': a.depth,
    });
  }

  // Calls: one chat span each, under its agent, with the recorded times and usage.
  const chats = spans.filter((s) => op(s) === 'chat');
  expect(chats).toHaveLength(sample.calls.length);
  for (const c of sample.calls) {
    const span = chats.find((s) => s.attributes['roller.call_id'] === c.call_id)!;
    expect(byId.get(span.parentSpanId)!.attributes['gen_ai.agent.id']).toBe(c.participant_id);
    expect(span.startMs).toBe(Date.parse(c.started_at));
    expect(span.endMs).toBe(Date.parse(c.ended_at));
    expect(span.kind).toBe(3); // CLIENT
    const u = c.usage.normalized;
    expect(span.attributes).toMatchObject({ 'gen_ai.request.model': c.request_model, 'gen_ai.usage.input_tokens': u.input + u.cached_input + u.cache_creation, 'gen_ai.usage.output_tokens': u.output });
    expect(span.attributes['gen_ai.provider.name']).toBe(c.protocol === 'anthropic-messages' ? 'anthropic' : 'openai');
    expect(Array.isArray(span.attributes['gen_ai.response.finish_reasons'])).toBe(true);
  }

  // Tool calls: one execute_tool span each; linked to the chat span whose input carried the result.
  const tools = spans.filter((s) => op(s) === 'execute_tool');
  expect(tools.map((s) => s.attributes['gen_ai.tool.call.id']).sort()).toEqual(sample.calls.flatMap((c) => (c.tool_refs as Json[]).map((r) => r.id)).sort());
  const inContext = sample.relations.filter((r) => r.type === 'result_in_context' && r.status === 'established');
  for (const r of inContext) {
    const tool = tools.find((s) => s.attributes['gen_ai.tool.call.id'] === r.tool_call_id)!;
    const into = chats.find((s) => s.attributes['roller.call_id'] === r.in_call_id)!;
    expect(tool.links.map((l) => l.spanId)).toContain(into.spanId);
    expect(tool.endMs).toBe(into.startMs);
  }

  // A sub-agent's span is a child of the execute_tool span of the tool call that spawned it.
  let underSpawn = 0;
  for (const a of expectedAgents.filter((x) => x.role === 'child' && x.spawn_tool_call_id)) {
    const span = agents.find((s) => s.attributes['gen_ai.agent.id'] === a.participant)!;
    const spawn = tools.find((s) => s.attributes['gen_ai.tool.call.id'] === a.spawn_tool_call_id);
    if (spawn) {
      expect(span.parentSpanId).toBe(spawn.spanId);
      underSpawn++;
    }
  }
  return { agents: agents.length, children: agents.filter((s) => s.attributes['roller.participant.role'] === 'child').length, underSpawn };
}

describe('roller export --format otlp: GenAI traces of real runs', () => {
  const tmp = useTempDir('otlp');
  const { collectValidRun } = collectRuns(tmp);
  const runs = { claude: '', codex: '' };
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    [runs.claude, runs.codex] = await Promise.all([
      collectValidRun('claude', [
        { id: 'parallel', prompt: '[MAIN:parallel] Use two sub-agents at once to read notes.txt.', files: NOTES },
        { id: 'background', prompt: '[MAIN:background] Use a background sub-agent to read notes.txt.', files: NOTES },
        ...demoTasks(),
      ], ['--harness', 'claude-code', '--model', 'scripted/default', '--concurrency', '2']),
      collectValidRun('codex', [{ id: 'fork', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', files: NOTES }], ['--harness', 'codex', '--codex-multi-agent', 'v2']),
    ]);
  }, 10 * 60_000);
  afterAll(async () => receiver?.close());

  const exportTo = async (run: string, extra: string[] = [], env?: NodeJS.ProcessEnv) => {
    receiver.spans.length = 0;
    receiver.requests.length = 0;
    const r = await roller(['export', run, '--format', 'otlp', ...extra], env ? { env } : {});
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  const traces = () => {
    const by = new Map<string, ReceivedSpan[]>();
    for (const s of receiver.spans) by.set(s.traceId, [...(by.get(s.traceId) ?? []), s]);
    return [...by.values()];
  };
  const traceOf = (path: string) => traces().find((t) => t.some((s) => s.attributes['roller.sample'] === path))!;

  it('Claude Code (http/protobuf): a trace per sample; parallel and background sub-agents under the tool calls that spawned them; tokens equal roller usage', async () => {
    const r = await exportTo(runs.claude, ['--endpoint', receiver.url]);
    expect(r.stderr).toContain('5 samples read, 5 sent as traces');
    expect(receiver.requests.every((q) => q.contentType === 'application/x-protobuf')).toBe(true);
    expect(traces()).toHaveLength(5);
    const samples = await recorded(runs.claude);
    const shapes = Object.fromEntries(samples.map((s) => [s.path.split('/').at(-1)!.replace(/^\d+_/, ''), checkTrace(traceOf(s.path), s, runs.claude)]));
    expect(shapes.parallel).toEqual({ agents: 3, children: 2, underSpawn: 2 });
    expect(shapes.background).toEqual({ agents: 2, children: 1, underSpawn: 1 });
    expect(shapes.delegate).toEqual({ agents: 2, children: 1, underSpawn: 1 });
    expect(shapes.hello).toEqual({ agents: 1, children: 0, underSpawn: 0 });
    expect(receiver.spans[0]!.resource['service.name']).toBe('roller');
    // Costs: the embedded scripted model is no real model: every call and agent costs nothing, said so.
    for (const c of receiver.spans.filter((s) => op(s) === 'chat' || op(s) === 'invoke_agent')) expect([c.attributes['roller.cost_source'], c.attributes['roller.cost_usd.priced']]).toEqual(['scripted', 0]);
    // No content unless asked for.
    expect(receiver.spans.some((s) => 'gen_ai.input.messages' in s.attributes)).toBe(false);
  });

  it('Codex (http/json, from OTEL_EXPORTER_OTLP_ENDPOINT): the forked sub-agent thread under its spawn call; tokens equal roller usage', async () => {
    await exportTo(runs.codex, ['--protocol', 'http/json'], { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    expect(receiver.requests.every((q) => q.contentType.startsWith('application/json'))).toBe(true);
    const [sample] = await recorded(runs.codex);
    const shape = checkTrace(traceOf(sample!.path), sample!, runs.codex);
    expect(shape.children).toBeGreaterThanOrEqual(1);
    expect(shape.underSpawn).toBe(shape.children);
  });

  it("--content adds each call's messages in the convention's shape; the collector's headers (a key) reach it and nothing else", async () => {
    const secret = 'otlp-header-canary-7f3a9c';
    await exportTo(runs.claude, ['--endpoint', receiver.url, '--content'], { ...process.env, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${secret}` });
    expect(receiver.requests.every((q) => q.headers.authorization === `Bearer ${secret}`)).toBe(true);
    const chats = receiver.spans.filter((s) => op(s) === 'chat');
    for (const c of chats) {
      const input = JSON.parse(c.attributes['gen_ai.input.messages'] as string) as Json[];
      expect(input.length).toBeGreaterThan(0);
      expect(input.every((m) => typeof m.role === 'string' && Array.isArray(m.parts))).toBe(true);
      const output = JSON.parse(c.attributes['gen_ai.output.messages'] as string) as Json[];
      expect(output[0]!.role).toBe('assistant');
    }
    const delegate = chats.find((c) => (c.attributes['gen_ai.output.messages'] as string).includes('"tool_call"'))!;
    expect(delegate).toBeDefined();
    for (const f of filesUnder(runs.claude)) expect(readFileSync(f).includes(secret), f).toBe(false);
  });

  it('a collector that refuses, or is not there: a clear error naming it, a failing exit, no stack', async () => {
    receiver.answer(400);
    try {
      const r = await roller(['export', runs.claude, '--format', 'otlp', '--endpoint', receiver.url]);
      expect(r.code).toBe(69);
      expect(r.stderr).toContain(`the OTLP endpoint ${receiver.url}/v1/traces did not take`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      receiver.answer(200);
    }
    // The exporter's own timeout variable (retries included): a closed port is given up on after 2 s, not 10.
    const gone = await roller(['export', runs.claude, '--format', 'otlp', '--endpoint', 'http://127.0.0.1:9'], { env: { ...process.env, OTEL_EXPORTER_OTLP_TIMEOUT: '2000' } });
    expect(gone.code).toBe(69);
    expect(gone.stderr).toContain('the OTLP endpoint http://127.0.0.1:9/v1/traces did not take');
    const none = await roller(['export', runs.claude, '--format', 'otlp'], { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no OTLP endpoint: pass --endpoint URL');
  });

  it('--sink otlp in collect sends each sample as it finishes', async () => {
    receiver.spans.length = 0;
    const tasks = join(tmp.path, 'sink.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(tasks, demoTasks().filter((t) => t.id === 'delegate').map((t) => JSON.stringify(t)).join('\n'));
    const r = await roller(['collect', '--tasks', tasks, '--harness', 'claude-code', '--model', 'scripted/default', '--capture-calls', '--output', join(tmp.path, 'runs'), '--run-name', 'sinked', '--sink', 'otlp', '--sink-option', `otlp.endpoint=${receiver.url}`]);
    expect(r.code, r.stderr).toBe(0);
    const run = join(tmp.path, 'runs', 'sinked');
    for (const s of await recorded(run)) checkTrace(traceOf(s.path), s, run);
    expect(traces()).toHaveLength(1);
  });
});
