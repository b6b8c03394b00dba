import { describe, expect, it } from 'vitest';
import { claudeCodeDelivery } from '../../../src/harnesses/claude-code/delivery.js';
import { codexDelivery } from '../../../src/harnesses/codex/delivery.js';
import type { ParticipantUsage } from '../../../src/harnesses/claude-code/participants.js';
import { Relation, checkValue, type Call } from '../../../src/schemas/index.js';
import { attributeCalls, deriveRelations } from '../../../src/transforms/capture/index.js';
import { recordExamples } from '../../support/record-examples.js';

type Json = Record<string, any>;
const base = recordExamples.call as Call;
const call = (seq: number, responseId: string | null, extra: Partial<Call> = {}): Call => ({
  ...base,
  call_id: `c-${seq}`,
  seq,
  response_id: responseId,
  participant_id: null,
  identity_status: 'unattributed',
  export_status: 'not_exportable',
  tool_refs: [],
  context: { messages: [] },
  ...extra,
});
const person = (participant: string, role: 'root' | 'child', ids: string[], extra: Partial<ParticipantUsage> = {}): ParticipantUsage => ({
  participant,
  role,
  native_id: participant,
  parent: null,
  spawn_tool_call_id: null,
  depth: role === 'root' ? 0 : 1,
  tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 },
  messages: ids.length,
  message_ids: ids,
  status: 'completed',
  status_source: 'main.jsonl:9',
  cost_usd: null,
  cost_note: null,
  reason: null,
  ...extra,
});

describe('attribution by evidence', () => {
  it('a call whose response id is one participant’s native output is attributed, and exportable when all else is complete', () => {
    const [c] = attributeCalls([call(0, 'msg_1')], [person('root', 'root', ['msg_1'])]);
    expect(c).toMatchObject({ participant_id: 'root', identity_status: 'attributed', export_status: 'exportable' });
  });

  it('a response id two participants claim is ambiguous; one nobody claims, or none at all, is unattributed; all stay', () => {
    const calls = attributeCalls([call(0, 'msg_1'), call(1, 'msg_x'), call(2, null)], [person('a', 'root', ['msg_1']), person('b', 'child', ['msg_1'])]);
    expect(calls.map((c) => [c.identity_status, c.participant_id, c.export_status])).toEqual([
      ['ambiguous', null, 'not_exportable'],
      ['unattributed', null, 'not_exportable'],
      ['unattributed', null, 'not_exportable'],
    ]);
    expect(calls[0]!.status_reasons.identity_status).toBe('response msg_1 is a native output of a and b');
  });

  it('identity is never inferred from order or text: a call without a native match is not given to the nearest participant', () => {
    const [c] = attributeCalls([call(5, 'msg_unknown', { context: { messages: [{ role: 'user', content: 'same text as root' }] } })], [person('root', 'root', ['msg_1'])]);
    expect(c!.participant_id).toBeNull();
  });

  it('a model mismatch or a partial response is not exportable, with the reason', () => {
    const [a, b] = attributeCalls(
      [call(0, 'msg_1', { request_model: 'claude-x', response_model: 'claude-y' }), call(1, 'msg_2', { response_capture_status: 'partial', capture_status: 'partial' })],
      [person('root', 'root', ['msg_1', 'msg_2'])],
    );
    expect(a!.status_reasons.export_status).toBe('model claude-y answered a request for claude-x');
    expect(b!.export_status).toBe('not_exportable');
    expect(b!.status_reasons.export_status).toContain('response partial');
  });
});

describe('relations with evidence', () => {
  const root = person('root', 'root', ['m1', 'm2', 'm3']);
  const child = person('kid', 'child', ['k1'], { parent: 'root', spawn_tool_call_id: 'toolu_A', spawn_result: 'result', status_source: 'agent-kid.meta.json#finished' });
  const withResult = (seq: number, id: string, extra: Partial<Call> = {}) =>
    call(seq, id, { context: { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'done' }] }] }, ...extra });

  it('spawn from the parent call whose output has the tool id; result_in_context once per later call carrying it', () => {
    const calls = attributeCalls(
      [call(0, 'm1', { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] }), call(1, 'k1'), withResult(2, 'm2'), withResult(3, 'm3')],
      [root, child],
    );
    const rel = deriveRelations({ calls, participants: [root, child], scope: 't' });
    for (const r of rel) expect(checkValue(Relation, r)).toEqual([]);
    expect(rel.map((r) => [r.type, r.parent_call_id, r.in_call_id])).toEqual([
      ['spawn', 'c-0', null],
      ['child_completed', 'c-0', null],
      ['result_delivered', 'c-0', null],
      ['result_in_context', 'c-0', 'c-2'],
      ['result_in_context', 'c-0', 'c-3'],
    ]);
  });

  it('the parent call is "unknown" when the tool id is in no parent output, or in two', () => {
    const none = deriveRelations({ calls: attributeCalls([call(0, 'm1'), withResult(1, 'm2')], [root, child]), participants: [root, child] });
    expect(none[0]).toMatchObject({ type: 'spawn', parent_call_id: 'unknown', status: 'unknown', reason: '0 parent calls carry tool call toolu_A in their output' });
    const refs = { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] };
    const two = deriveRelations({ calls: attributeCalls([call(0, 'm1', refs), call(1, 'm2', refs)], [root, child]), participants: [root, child] });
    expect(two[0]!.parent_call_id).toBe('unknown');
  });

  it('the same result text in a later call without the tool id is not a result in context', () => {
    const calls = attributeCalls(
      [call(0, 'm1', { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] }), call(1, 'm2', { context: { messages: [{ role: 'user', content: 'done' }] } })],
      [root, child],
    );
    expect(deriveRelations({ calls, participants: [root, child] }).map((r) => r.type)).toEqual(['spawn', 'child_completed']);
  });

  it('a launch acknowledgement is never completion: launch_acknowledged and launch_ack_in_context, no result_delivered', () => {
    const bg = { ...child, spawn_result: 'acknowledgement' as const };
    const calls = attributeCalls([call(0, 'm1', { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] }), withResult(1, 'm2')], [root, bg]);
    expect(deriveRelations({ calls, participants: [root, bg] }).map((r) => [r.type, r.in_call_id])).toEqual([
      ['spawn', null],
      ['child_completed', null],
      ['launch_acknowledged', null],
      ['launch_ack_in_context', 'c-1'],
    ]);
  });

  it('Responses: model_tool_ref keeps both the call_id and the item_id of the spawning output', () => {
    const kid = { ...child, spawn_tool_call_id: 'call_9' };
    const calls = attributeCalls([call(0, 'm1', { protocol: 'openai-responses', tool_refs: [{ id: 'call_9', name: 'spawn_agent', item_id: 'fc_9' }] })], [root, kid]);
    expect(deriveRelations({ calls, participants: [root, kid] })[0]!.model_tool_ref).toEqual({ call_id: 'call_9', item_id: 'fc_9' });
  });

  it('a child whose spawning call is unknown gets an unknown spawn relation with the reason, nothing made up', () => {
    const orphan = { ...child, parent: null, spawn_tool_call_id: null, reason: 'no meta.json toolUseId and no tool_result naming this agentId: the spawning call is unknown' };
    const rel = deriveRelations({ calls: [], participants: [root, orphan] });
    expect(rel).toHaveLength(1);
    expect(rel[0]).toMatchObject({ type: 'spawn', status: 'unknown', parent_call_id: 'unknown', reason: orphan.reason });
    expect(checkValue(Relation, rel[0] as Json)).toEqual([]);
  });

  it('a background result is delivered only by a notification that names both the task id and the tool-use id', () => {
    const bg = { ...child, native_id: 'a123', spawn_result: 'acknowledgement' as const };
    const note = (text: string, seq: number, id: string) => call(seq, id, { context: { messages: [{ role: 'user', content: text }] } });
    const good = '<task-notification><task-id>a123</task-id><tool-use-id>toolu_A</tool-use-id><status>completed</status></task-notification>';
    const noIds = '<task-notification><status>completed</status><summary>done</summary></task-notification>';
    const spawnCall = call(0, 'm1', { tool_refs: [{ id: 'toolu_A', name: 'Agent' }] });
    const withIds = deriveRelations({ calls: attributeCalls([spawnCall, note(good, 1, 'm2')], [root, bg]), participants: [root, bg], delivery: claudeCodeDelivery });
    expect(withIds.filter((r) => r.type === 'result_delivered' || r.type === 'result_in_context').map((r) => [r.type, r.in_call_id])).toEqual([
      ['result_delivered', null],
      ['result_in_context', 'c-1'],
    ]);
    const textOnly = deriveRelations({ calls: attributeCalls([spawnCall, note(noIds, 1, 'm2')], [root, bg]), participants: [root, bg], delivery: claudeCodeDelivery });
    expect(textOnly.map((r) => r.type)).not.toContain('result_delivered');
  });

  it('Codex: the result is delivered by the wait_agent output naming the child (v1) or its FINAL_ANSWER (v2)', () => {
    const kid = { ...child, native_id: 'thread-kid', spawn_tool_call_id: 'call_s', spawn_result: 'acknowledgement' as const };
    const responses = (seq: number, id: string, input: Json[], extra: Partial<Call> = {}) => call(seq, id, { protocol: 'openai-responses', context: { input }, ...extra });
    const spawnCall = responses(0, 'm1', [], { tool_refs: [{ id: 'call_s', name: 'multi_agent_v1/spawn_agent', item_id: 'fc_s' }] });
    const v1 = deriveRelations({
      calls: attributeCalls([spawnCall, responses(1, 'm2', [{ type: 'function_call_output', call_id: 'call_w', output: JSON.stringify({ status: { 'thread-kid': { completed: 'hi' } } }) }])], [root, kid]),
      participants: [root, kid],
      delivery: codexDelivery,
    });
    expect(v1.map((r) => r.type)).toContain('result_delivered');
    const v2input = [{ type: 'agent_message', author: '/root/kid', recipient: '/root', content: [{ type: 'input_text', text: 'Message Type: FINAL_ANSWER' }] }];
    const v2 = deriveRelations({ calls: attributeCalls([spawnCall, responses(1, 'm2', v2input)], [root, kid]), participants: [root, kid], agentPaths: { 'thread-kid': '/root/kid' }, delivery: codexDelivery });
    expect(v2.map((r) => r.type)).toContain('result_delivered');
    const other = deriveRelations({ calls: attributeCalls([spawnCall, responses(1, 'm2', v2input)], [root, kid]), participants: [root, kid], agentPaths: { 'thread-kid': '/root/other' }, delivery: codexDelivery });
    expect(other.map((r) => r.type)).not.toContain('result_delivered');
  });

  it('Codex v1: a <subagent_notification> delivers only when it names the child thread as completed', () => {
    const kid = { ...child, native_id: 'thread-kid', spawn_tool_call_id: 'call_s', spawn_result: 'acknowledgement' as const };
    const spawnCall = call(0, 'm1', { protocol: 'openai-responses', context: { input: [] }, tool_refs: [{ id: 'call_s', name: 'multi_agent_v1/spawn_agent' }] });
    const note = (path: string) =>
      call(1, 'm2', { protocol: 'openai-responses', context: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `<subagent_notification>{"agent_path":"${path}","status":{"completed":"ok"}}</subagent_notification>` }] }] } });
    const types = (path: string) => deriveRelations({ calls: attributeCalls([spawnCall, note(path)], [root, kid]), participants: [root, kid], delivery: codexDelivery }).map((r) => r.type);
    expect(types('thread-kid')).toContain('result_delivered');
    expect(types('thread-other')).not.toContain('result_delivered');
  });

  it('a composite native tool id call_id|item_id must match both in the spawning output; one of the two is not enough', () => {
    const kid = { ...child, spawn_tool_call_id: 'call_9|fc_9' };
    const spawnWith = (ref: { id: string; name: string; item_id?: string }) =>
      deriveRelations({ calls: attributeCalls([call(0, 'm1', { protocol: 'openai-responses', tool_refs: [ref] })], [root, kid]), participants: [root, kid] })[0]!;
    expect(spawnWith({ id: 'call_9', name: 'sessions_spawn', item_id: 'fc_9' })).toMatchObject({ parent_call_id: 'c-0', status: 'established', model_tool_ref: { call_id: 'call_9', item_id: 'fc_9' } });
    expect(spawnWith({ id: 'call_9', name: 'sessions_spawn', item_id: 'fc_OTHER' })).toMatchObject({ parent_call_id: 'unknown', status: 'unknown' });
    expect(spawnWith({ id: 'call_OTHER', name: 'sessions_spawn', item_id: 'fc_9' })).toMatchObject({ parent_call_id: 'unknown', status: 'unknown' });
  });
});

describe('tool-call ids a harness rewrote on the wire (OpenClaw: call_0001 emitted, call0001 sent back)', () => {
  const spawnArgs = '{"task":"read notes","label":"reader"}';
  const emitted = (seq: number, id: string, args = spawnArgs): Call =>
    call(seq, `r${seq}`, {
      protocol: 'openai-chat-completions',
      output: { choices: [{ index: 0, message: { role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name: 'sessions_spawn', arguments: args } }] } }] },
      tool_refs: [{ id, name: 'sessions_spawn' }],
    });
  const later = (seq: number, historyId: string, args = spawnArgs): Call =>
    call(seq, `r${seq}`, {
      protocol: 'openai-chat-completions',
      output: { choices: [{ index: 0, message: { role: 'assistant', content: 'done' } }] },
      context: {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: '', tool_calls: [{ id: historyId, type: 'function', function: { name: 'sessions_spawn', arguments: args } }] },
          { role: 'tool', tool_call_id: historyId, content: 'child finished' },
        ],
      },
    });
  const root = person('root', 'root', ['r0', 'r1']);
  const child = person('child', 'child', [], { parent: 'root', spawn_tool_call_id: 'call_0001' });

  it('the result reaches the parent under the rewritten id: result_in_context by the history that replays the output', () => {
    const calls = attributeCalls([emitted(0, 'call_0001'), later(1, 'call0001')], [root, child]);
    const rel = deriveRelations({ calls, participants: [root, child], scope: 't' });
    expect(rel.filter((r) => r.type === 'result_in_context').map((r) => r.in_call_id)).toEqual(['c-1']);
  });

  it('no alias from a history whose tool call differs in name or arguments, or whose id differs otherwise', () => {
    for (const c of [later(1, 'call0001', '{"task":"other"}'), later(1, 'callX0001')]) {
      const rel = deriveRelations({ calls: attributeCalls([emitted(0, 'call_0001'), c], [root, child]), participants: [root, child], scope: 't' });
      expect(rel.filter((r) => r.type === 'result_in_context')).toEqual([]);
    }
  });
});
