import { describe, expect, it } from 'vitest';
import { claudeCodeCompactions, compactionSummaryCalls } from '../../../src/harnesses/claude-code/compaction.js';
import { SftSegment, checkValue, type Actf, type Call } from '../../../src/schemas/index.js';
import { projectSegments } from '../../../src/transforms/sft/segments.js';
import { recordExamples } from '../../support/record-examples.js';

type Json = Record<string, any>;
const base = recordExamples.call as Call;
const SYSTEM = [{ type: 'text', text: 'You are an agent.' }];
const TOOLS = [{ name: 'Bash', description: 'run', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];

/** A root call: the request's messages and the response's content blocks (Anthropic Messages). */
const call = (seq: number, messages: Json[], content: Json[], extra: Partial<Call> = {}): Call =>
  ({
    ...base,
    call_id: `c-${seq}`,
    seq,
    protocol: 'anthropic-messages',
    response_id: `msg_${seq}`,
    participant_id: 'root',
    identity_status: 'attributed',
    execution_status: 'completed',
    native_identity: { session_id: 'S' },
    context: { system: SYSTEM, tools: TOOLS, messages },
    output: { id: `msg_${seq}`, role: 'assistant', content },
    ...extra,
  }) as Call;

const use = (id: string, command: string) => ({ type: 'tool_use', id, name: 'Bash', input: { command } });
const result = (id: string, text: string) => ({ type: 'tool_result', tool_use_id: id, content: text, cache_control: { type: 'ephemeral' } });
const actf = (ids: string[]): Actf =>
  ({
    schema_version: (recordExamples.actf as Actf).schema_version,
    system_prompt: 'You are an agent.',
    system_prompt_source: 'wire',
    tools: null,
    tools_source: 'wire',
    steps: ids.map((id, i) => ({ step_id: i + 1, user_content: null, assistant_content: { reasoning_content: null, content: '', tool_calls: [] }, observation: [], metric: null, started_at: null, finished_at: null, stop_reason: null, native_ids: { message_id: id } })),
    timing: { started_at: null, finished_at: null, duration_ms: null },
  }) as Actf;

// A session: two turns, a compaction (summary call 3), then a window that keeps turn 2 verbatim after the summary.
const out1 = [{ type: 'thinking', thinking: 'think 1', signature: 's' }, { type: 'text', text: 'one' }, use('t1', 'a')];
const out2 = [{ type: 'text', text: 'two' }, use('t2', 'b')];
const c1 = call(1, [{ role: 'user', content: 'do it' }], out1);
const c2 = call(2, [{ role: 'user', content: 'do it' }, { role: 'assistant', content: out1 }, { role: 'user', content: [result('t1', 'A')] }], out2);
const summary = call(3, [{ role: 'user', content: 'do it' }, { role: 'assistant', content: out1 }, { role: 'user', content: [result('t1', 'A'), { type: 'text', text: 'Summarise.' }] }], [{ type: 'text', text: '<summary>S1</summary>' }], {
  participant_id: null,
  identity_status: 'unattributed',
  response_id: 'msg_summary',
});
const c4 = call(4, [{ role: 'user', content: 'Summary:\nS1' }, { role: 'assistant', content: out2 }, { role: 'user', content: [result('t2', 'B'), { type: 'text', text: 'reminder' }] }], [{ type: 'text', text: 'done' }]);
const boundary = [{ summaryCallId: 'c-3', source: 'claude-code compact_boundary B1' }];

describe('compaction segments (seeds/003 §4.3)', () => {
  it('one window per context the model saw: targets are the outputs, the context the actual first request, tool results from the request that carried them', () => {
    const p = projectSegments(actf(['msg_1', 'msg_2', 'msg_4']), [c1, c2, summary, c4], boundary, { keepThinking: true });
    expect(p.status).toBe('ok');
    if (p.status !== 'ok') return;
    expect(p.segments.map((s) => s.meta)).toEqual([
      { path: 'sft_segments/0001.json', order: 1, boundary_source: 'session_start', call_ids: ['c-1', 'c-2'] },
      { path: 'sft_segments/0002.json', order: 2, boundary_source: 'claude-code compact_boundary B1', call_ids: ['c-4'] },
    ]);
    const [s1, s2] = p.segments.map((s) => s.record);
    expect(s1).toEqual({
      messages: [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'do it' },
        { role: 'assistant', reasoning_content: 'think 1', content: 'one', tool_calls: [{ id: 't1', type: 'function', function: { name: 'Bash', arguments: { command: 'a' } } }] },
        { role: 'tool', tool_call_id: 't1', content: 'A' },
        { role: 'assistant', reasoning_content: '', content: 'two', tool_calls: [{ id: 't2', type: 'function', function: { name: 'Bash', arguments: { command: 'b' } } }] },
        // t2's result reached the model only in the next window's first request: taken from there.
        { role: 'tool', tool_call_id: 't2', content: 'B' },
      ],
      tools: [{ type: 'function', function: { name: 'Bash', description: 'run', parameters: TOOLS[0]!.input_schema } }],
      target_start_index: 2,
    });
    // The second window: summary, the kept turn 2 as context (not a target), its result and the new user text.
    expect(s2!.target_start_index).toBe(5);
    expect(s2!.messages.slice(1, 5).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(s2!.messages[5]).toEqual({ role: 'assistant', reasoning_content: '', content: 'done', tool_calls: [] });
    for (const s of p.segments) expect(checkValue(SftSegment, s.record)).toEqual([]);
  });

  it('--no-keep-thinking clears reasoning in the prompt as well as in the targets', () => {
    const p = projectSegments(actf(['msg_1', 'msg_2', 'msg_4']), [c1, c2, summary, c4], boundary, { keepThinking: false });
    if (p.status !== 'ok') throw new Error(p.reason);
    for (const s of p.segments) for (const m of s.record.messages) if (m.role === 'assistant') expect(m.reasoning_content).toBe('');
  });

  it('a request that does not continue its window without a compaction in between makes segments unavailable', () => {
    const p = projectSegments(actf(['msg_1', 'msg_2', 'msg_4']), [c1, c2, c4], [], { keepThinking: true });
    expect(p).toEqual({ status: 'unavailable', reason: 'call c-4: its request does not continue the context of call c-2, and no compaction came in between' });
  });

  it('root calls must match the ACTF main steps one to one (apart from summary calls)', () => {
    expect(projectSegments(actf(['msg_1', 'msg_2']), [c1, c2, summary, c4], boundary, { keepThinking: true })).toEqual({
      status: 'unavailable',
      reason: 'call c-4 (response msg_4) is no ACTF main step and no compaction summary',
    });
    expect(projectSegments(actf(['msg_1', 'msg_2', 'msg_4', 'msg_9']), [c1, c2, summary, c4], boundary, { keepThinking: true })).toMatchObject({
      status: 'unavailable',
      reason: 'ACTF step 4 (message msg_9) has no captured main-agent call',
    });
  });

  it('a tool result that never reached the model, or content SFT cannot hold, makes segments unavailable with the reason', () => {
    const last = call(4, [{ role: 'user', content: 'Summary:\nS1' }, { role: 'assistant', content: out2 }, { role: 'user', content: [result('t2', 'B')] }], [use('t9', 'x')]);
    expect(projectSegments(actf(['msg_1', 'msg_2', 'msg_4']), [c1, c2, summary, last], boundary, { keepThinking: true })).toEqual({
      status: 'unavailable',
      reason: "tool call 't9' of call c-4 has no result in any captured request",
    });
    const doc = call(1, [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'x' } }] }], [{ type: 'text', text: 'ok' }]);
    expect(projectSegments(actf(['msg_1']), [doc], [], { keepThinking: true })).toMatchObject({ status: 'unavailable', reason: expect.stringContaining("a 'document' block cannot be exported losslessly") });
  });
});

describe('Claude Code compaction records', () => {
  const records = [
    { type: 'user', uuid: 'u1', parentUuid: null, message: { content: 'do it' } },
    // roller's trace.jsonl need not keep file order: the summary comes first here, linked by its parent chain.
    { type: 'user', uuid: 'sum', parentUuid: 'att', isCompactSummary: true, message: { content: 'This session is being continued…\nSummary:\nS1\n\nIf you need specific details…' } },
    { type: 'attachment', uuid: 'att', parentUuid: 'B1' },
    { type: 'system', subtype: 'compact_boundary', uuid: 'B1', parentUuid: null, logicalParentUuid: 'u1', compactMetadata: { trigger: 'auto' } },
    { type: 'system', subtype: 'compact_boundary', uuid: 'SIDE', isSidechain: true },
  ];

  it('boundaries with the summary their parent chain leads to; sidechains are not the main context', () => {
    expect(claudeCodeCompactions(records)).toEqual([{ boundaryUuid: 'B1', trigger: 'auto', summaryUuid: 'sum', summaryText: expect.stringContaining('Summary:\nS1') }]);
  });

  it('the summary call is the root-session call whose <summary> is recorded verbatim; two such calls match none', () => {
    const compactions = claudeCodeCompactions(records);
    expect([...compactionSummaryCalls([c1, c2, summary, c4], compactions, 'S').keys()]).toEqual(['c-3']);
    expect(compactionSummaryCalls([summary], compactions, 'another-session').size).toBe(0);
    expect(compactionSummaryCalls([summary, { ...summary, call_id: 'c-5', seq: 5 }], compactions, 'S').size).toBe(0);
  });
});
