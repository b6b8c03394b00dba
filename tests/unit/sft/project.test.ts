import { describe, expect, it } from 'vitest';
import { SftRecord, checkValue, type Actf } from '../../../src/schemas/index.js';
import { projectSft } from '../../../src/transforms/sft/project.js';

type Json = Record<string, any>;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function base(): Actf {
  return {
    schema_version: 'roller.actf/v1',
    system_prompt: 'You are a coding agent.',
    system_prompt_source: 'wire',
    tools: [
      { type: 'function', function: { name: 'Bash', parameters: { type: 'object' } } },
      { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } } as never,
    ],
    tools_source: 'wire',
    steps: [
      {
        step_id: 1,
        user_content: 'List files.',
        assistant_content: { reasoning_content: 'run ls', content: '', tool_calls: [{ id: 't1', name: 'Bash', type: 'function', arguments: { command: 'ls' } }] },
        observation: [{ toolCallId: 't1', content: 'a.txt', isError: false }],
        metric: null,
        started_at: null,
        finished_at: null,
        stop_reason: 'tool_use',
      },
      {
        step_id: 2,
        user_content: null,
        assistant_content: { reasoning_content: null, content: 'One file.', tool_calls: [] },
        observation: [],
        metric: null,
        started_at: null,
        finished_at: null,
        stop_reason: 'end_turn',
      },
    ],
    timing: { started_at: null, finished_at: null, duration_ms: null },
  };
}

const reasonOf = (a: Actf, keepThinking = true) => {
  const r = projectSft(a, { keepThinking });
  return r.status === 'ok' ? 'ok' : r.reason;
};

describe('SFT projection', () => {
  it('projects system, user, assistant (all four fields) and tool messages, and validates', () => {
    const r = projectSft(base(), { keepThinking: true });
    expect(r.status).toBe('ok');
    const rec = (r as { record: Json }).record;
    expect(rec.messages.map((m: Json) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(rec.messages[2]).toEqual({ role: 'assistant', reasoning_content: 'run ls', content: '', tool_calls: [{ id: 't1', type: 'function', function: { name: 'Bash', arguments: { command: 'ls' } } }] });
    expect(rec.messages[3]).toEqual({ role: 'tool', tool_call_id: 't1', content: 'a.txt' });
    expect(checkValue(SftRecord, rec)).toEqual([]);
  });

  it('--no-keep-thinking empties reasoning', () => {
    const r = projectSft(base(), { keepThinking: false }) as { record: Json };
    expect(r.record.messages.filter((m: Json) => m.role === 'assistant').map((m: Json) => m.reasoning_content)).toEqual(['', '']);
  });

  it('images become <image> placeholders with an aligned data-URI list', () => {
    const a = base();
    a.steps[0]!.user_content = [{ type: 'text', text: 'What is this? ' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }];
    const r = projectSft(a, { keepThinking: true }) as { record: Json };
    expect(r.record.messages[1].content).toBe('What is this? <image>');
    expect(r.record.images).toEqual([`data:image/png;base64,${PNG}`]);
    expect(checkValue(SftRecord, r.record)).toEqual([]);
  });

  it('Codex custom tool input stays a string', () => {
    const a = base();
    a.steps[0]!.assistant_content.tool_calls.push({ id: 't2', name: 'apply_patch', type: 'custom', arguments: '*** Begin Patch' });
    a.steps[0]!.observation.push({ toolCallId: 't2', content: 'done', isError: false });
    expect(reasonOf(a)).toBe('ok');
  });

  const broken: [string, (a: Actf) => void, RegExp][] = [
    ['a tool call without its result', (a) => (a.steps[0]!.observation = []), /tool call 't1' has 0 results/],
    ['a tool call with two results', (a) => a.steps[0]!.observation.push({ toolCallId: 't1', content: 'again', isError: false }), /has 2 results/],
    ['a result that answers a call of another step', (a) => a.steps[1]!.observation.push({ toolCallId: 't1', content: 'late', isError: false }), /call of another step/],
    [
      'a tool call id used twice',
      (a) => {
        a.steps[1]!.assistant_content.tool_calls.push({ id: 't1', name: 'Bash', type: 'function', arguments: {} });
        a.steps[1]!.observation.push({ toolCallId: 't1', content: 'x', isError: false });
      },
      /'t1' is not unique/,
    ],
    ['an empty tool call id', (a) => (a.steps[0]!.assistant_content.tool_calls[0]!.id = ''), /without an id/],
    ['a tool missing from the schema', (a) => (a.steps[0]!.assistant_content.tool_calls[0]!.name = 'Grep'), /'Grep' is not in the tools schema/],
    ['function arguments that are a string', (a) => (a.steps[0]!.assistant_content.tool_calls[0]!.arguments = '{"command":"ls"}'), /not a JSON object/],
    ['tool calls but no captured tools schema', (a) => (a.tools = null), /no tools schema was captured/],
    ['an image that only references a path', (a) => (a.steps[0]!.user_content = [{ type: 'image', source: { type: 'path', path: '/tmp/x.png' } }]), /only references a path/],
    ['an image of an unsupported media type', (a) => (a.steps[0]!.user_content = [{ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: PNG } }]), /unsupported image media type/],
    ['malformed base64', (a) => (a.steps[0]!.user_content = [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'not base64!' } }]), /malformed base64/],
    ['an audio block in a tool result', (a) => (a.steps[0]!.observation[0]!.content = [{ type: 'audio', data: 'x' } as never]), /'audio' block cannot be exported/],
    ['no user message', (a) => (a.steps[0]!.user_content = null), /no user message/],
  ];
  it.each(broken)('is unavailable, with the reason, for %s', (_name, mutate, reason) => {
    const a = base();
    mutate(a);
    expect(reasonOf(a)).toMatch(reason);
  });
});
