import { describe, expect, it } from 'vitest';
import { completionAudit, modelIdentityAudit } from '../../src/pipelines/collect/audits.js';
import type { Actf, Call } from '../../src/schemas/index.js';
import { recordExamples } from '../support/record-examples.js';

const base = recordExamples.call as Call;
const call = (seq: number, output: unknown, extra: Partial<Call> = {}): Call => ({ ...base, call_id: `c-${seq}`, seq, output, ...extra } as Call);
const text = (t: string, stop = 'end_turn') => ({ type: 'message', content: [{ type: 'text', text: t }], stop_reason: stop });
const actf = (stop: string | null) => ({ steps: [{ stop_reason: stop }] }) as unknown as Actf;

describe('completion audit (seeds/003 §6.2)', () => {
  it('flags a final response that stopped at a token limit, even when the ACTF says it ended', () => {
    expect(completionAudit([call(0, text('a')), call(1, text('cut', 'max_tokens'))], actf('end_turn'))).toMatchObject({ status: 'flagged', source: 'wire', actf_stop_reason: 'end_turn' });
    // The ACTF said the trajectory ended well; the wire overrode it, and the ACTF's finding is kept (actf_completion_audit).
    expect(completionAudit([call(0, text('a')), call(1, text('cut', 'max_tokens'))], actf('end_turn')).actf_finding).toEqual({ status: 'not_flagged', reason: null });
    expect(completionAudit([call(0, text('done'))], actf('end_turn')).actf_finding).toBeUndefined(); // both agree
  });
  it('an earlier truncated response followed by a completed one is not flagged', () => {
    expect(completionAudit([call(0, text('cut', 'max_tokens')), call(1, text('done'))], null).status).toBe('not_flagged');
  });
  it('flags an empty final answer without tool calls; a final tool call is not empty', () => {
    expect(completionAudit([call(0, text('  '))], null)).toMatchObject({ status: 'flagged', reason: expect.stringContaining('empty answer') });
    expect(completionAudit([call(0, { type: 'message', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: {} }], stop_reason: 'tool_use' })], null).status).toBe('not_flagged');
  });
  it('Chat length and Responses incomplete are token limits too', () => {
    expect(completionAudit([call(0, { choices: [{ message: { content: 'x' }, finish_reason: 'length' }] }, { protocol: 'openai-chat-completions' })], null).status).toBe('flagged');
    expect(completionAudit([call(0, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }, { protocol: 'openai-responses' })], null).status).toBe('flagged');
    expect(completionAudit([call(0, { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'hi' }] }] }, { protocol: 'openai-responses' })], null).status).toBe('not_flagged');
  });
  it('an unknown finish reason is never read either way: the ACTF decides, else not observable', () => {
    expect(completionAudit([call(0, { something: 'else' })], null).status).toBe('not_observable');
    expect(completionAudit([], actf('max_tokens'))).toMatchObject({ status: 'flagged', source: 'actf' });
  });
});

describe('model identity audit', () => {
  it('records what was asked for and what answered; a different name is a mismatch (a warning)', () => {
    expect(modelIdentityAudit([call(0, text('a'), { request_model: 'm', response_model: 'm' })])).toMatchObject({ status: 'match', requested_models: ['m'], response_models: ['m'], finish_reasons: ['end_turn'] });
    expect(modelIdentityAudit([call(0, text('a'), { request_model: 'm', response_model: 'm-2026' })]).status).toBe('name_mismatch');
    expect(modelIdentityAudit([call(0, null, { request_model: null, response_model: null })]).status).toBe('not_observable');
    // Per request, in request order (a set would hide which request was answered by what).
    const perRequest = modelIdentityAudit([call(1, text('b'), { request_model: 'm', response_model: 'm-2026' }), call(0, text('a'), { request_model: 'm', response_model: 'm' })]).requests;
    expect(perRequest.map((r) => [r.requested_model, r.response_model, r.finish_reason])).toEqual([
      ['m', 'm', 'end_turn'],
      ['m', 'm-2026', 'end_turn'],
    ]);
  });
});

describe('wire effort and thinking audits', async () => {
  const { wireEffortAudit, thinkingAudit } = await import('../../src/pipelines/collect/audits.js');
  const { harnessAdapter } = await import('../../src/harnesses/index.js');
  const req = (context: unknown) => call(0, null, { context } as Partial<Call>);
  it('every request against the requested level: matched, mismatch, unverified, not observable', () => {
    expect(wireEffortAudit([req({ output_config: { effort: 'high' } }), req({ reasoning: { effort: 'high' } })], 'high').status).toBe('matched');
    expect(wireEffortAudit([req({ output_config: { effort: 'high' } }), req({ output_config: { effort: 'low' } })], 'high')).toMatchObject({ status: 'mismatch', observed: ['high', 'low'] });
    expect(wireEffortAudit([req({ output_config: { effort: 'high' } }), req({ model: 'm' })], 'high').status).toBe('unverified');
    expect(wireEffortAudit([], 'high').status).toBe('not_observable');
  });
  it('visible reasoning counted from the ACTF; nothing observable without --keep-thinking', () => {
    const a = { steps: [{ assistant_content: { reasoning_content: 'I think' } }, { assistant_content: { reasoning_content: '' } }] } as unknown as Actf;
    expect(thinkingAudit(a, 'high', true)).toEqual({ status: 'visible_reasoning', requested: 'high', steps_with_reasoning: 1 });
    expect(thinkingAudit(a, 'high', false).status).toBe('not_observable');
    // off asked, reasoning visible: a mismatch; none visible is no proof, but no mismatch either.
    expect(thinkingAudit(a, 'off', true)).toEqual({ status: 'mismatch', requested: 'off', steps_with_reasoning: 1 });
    expect(thinkingAudit({ steps: [] } as unknown as Actf, 'off', true).status).toBe('no_visible_reasoning');
    expect(thinkingAudit(a, 'off', false).status).toBe('not_observable');
    // Anthropic's thinking {type: disabled} is what off asks on the wire.
    expect(wireEffortAudit([req({ thinking: { type: 'disabled' } })], 'off').status).toBe('matched');
    expect(wireEffortAudit([req({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })], 'off').status).toBe('mismatch');
  });
  it('no captured request (--wire-trace off): the harness’s own request snapshots, said as the source (seeds/003 B15.5)', async () => {
    const { join } = await import('node:path');
    const { readdirSync } = await import('node:fs');
    const { repoRoot } = await import('../support/paths.js');
    // A real Claude Code 2.1.332 session file: each api-request record keeps the parameters it sent.
    const project = join(repoRoot, 'tests/fixtures/claude-code/nested-2.1.332/projects');
    const dir = join(project, readdirSync(project)[0]!);
    const main = join(dir, readdirSync(dir).find((f) => f.endsWith('.jsonl'))!);
    const snapshots = await harnessAdapter('claude-code').requestSnapshots!(main);
    expect(snapshots.length).toBeGreaterThan(0);
    expect(wireEffortAudit([], 'medium', snapshots)).toEqual({ status: 'matched', requested: 'medium', observed: snapshots.map(() => 'medium'), source: 'native' });
    expect(wireEffortAudit([], 'high', snapshots)).toMatchObject({ status: 'mismatch', source: 'native' });
    // Captured requests, when there are some, are the evidence.
    expect(wireEffortAudit([req({ output_config: { effort: 'high' } })], 'high', snapshots)).toMatchObject({ status: 'matched', source: 'wire' });
  });
  it('the harness arguments for a level, as each adapter plans them', async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const base = await mkdtemp(join(tmpdir(), 'roller-thinking-'));
    const launch = (name: string) => ({ bin: 'x', prompt: 'p', home: join(base, name), work: base, baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
    expect((await harnessAdapter('claude-code').runner!.plan({ ...launch('claude'), thinking: 'high' })).args.join(' ')).toContain('--effort high');
    const off = await harnessAdapter('claude-code').runner!.plan({ ...launch('claude-off'), thinking: 'off' });
    expect([off.args.includes('--effort'), off.env.MAX_THINKING_TOKENS]).toEqual([false, '0']);
    expect((await harnessAdapter('codex').runner!.plan({ ...launch('codex'), thinking: 'low' })).args.join(' ')).toContain('-c model_reasoning_effort="low"');
    // OpenCode: a variant of roller's model (its title model at the same level); Pi: its --thinking on a reasoning model.
    const opencode = await harnessAdapter('opencode').runner!.plan({ ...launch('opencode'), thinking: 'high' });
    expect(opencode.args.join(' ')).toContain('--variant high');
    const pi = await harnessAdapter('pi').runner!.plan({ ...launch('pi'), thinking: 'high' });
    expect(pi.args.join(' ')).toContain('--thinking high');
    expect(harnessAdapter('deepseek').runner!.thinkingLevels).toEqual([]);
  });
});
