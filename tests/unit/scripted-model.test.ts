import { describe, expect, it } from 'vitest';
import { conversationOf, decide, DEFAULT_SCRIPT, Script } from '../../src/sources/scripted-model/index.js';

type Json = Record<string, any>;
const agentTool = { name: 'Agent', input_schema: { type: 'object', properties: { prompt: {}, description: {}, run_in_background: {} } } };

describe('scripted model: replies decided from the conversation itself', () => {
  it('ignores role:"system" entries and harness-injected context, and picks the turn from the model turns since the tag', () => {
    const first: Json = { model: 'm', tools: [agentTool], messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>ctx</system-reminder>' }, { type: 'text', text: '[MAIN:single] go' }] }] };
    const r0 = decide(DEFAULT_SCRIPT, conversationOf('anthropic-messages', first));
    expect(r0.scenario).toBe('delegate-single');
    expect(r0.calls).toEqual([{ name: 'Agent', custom: false, input: expect.objectContaining({ run_in_background: false, prompt: expect.stringContaining('[SUB:A]') }) }]);
    const later: Json = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Agent', input: {} }] },
        { role: 'system', content: 'mid-conversation system entry' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'The secret word is BLUEBIRD.' }] },
      ],
    };
    const r1 = decide(DEFAULT_SCRIPT, conversationOf('anthropic-messages', later));
    expect(r1.turn).toBe(1);
    expect(r1.calls).toEqual([]);
    expect(r1.text).toContain('BLUEBIRD');
  });

  it('a parallel delegation asks for two sub-agents in one response', () => {
    const body: Json = { model: 'm', tools: [agentTool], messages: [{ role: 'user', content: '[MAIN:parallel] go' }] };
    const r = decide(DEFAULT_SCRIPT, conversationOf('anthropic-messages', body));
    expect(r.calls.map((c) => (c.input as Json).prompt.slice(0, 7))).toEqual(['[SUB:A]', '[SUB:B]']);
  });

  it('a child that replays its parent history answers as the child (the latest tagged user message wins)', () => {
    const body: Json = {
      model: 'm',
      tools: [{ type: 'function', name: 'exec_command', parameters: {} }],
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '[MAIN:single] root task' }] },
        { type: 'function_call', call_id: 'c1', name: 'spawn_agent', arguments: '{}' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '[SUB:A] read notes' }] },
      ],
    };
    const r = decide(DEFAULT_SCRIPT, conversationOf('openai-responses', body));
    expect(r.scenario).toBe('sub-agent-a');
    expect(r.calls).toEqual([{ name: 'exec_command', custom: false, input: { cmd: 'head -n 1 notes.txt' } }]);
  });

  it('never loops a harness: past the last turn a tool turn is not repeated', () => {
    const script = Script.parse({ scenarios: [{ name: 'loop', match: '[L]', turns: [{ tool_calls: [[{ name: 'bash', input: { command: 'ls' } }]] }] }], fallback: { text: 'x' } });
    const body: Json = { model: 'm', tools: [{ type: 'function', function: { name: 'bash', parameters: {} } }], messages: [{ role: 'user', content: '[L]' }, { role: 'assistant', content: null, tool_calls: [] }, { role: 'tool', tool_call_id: 'a', content: 'ok' }] };
    const r = decide(script, conversationOf('openai-chat-completions', body));
    expect(r.calls).toEqual([]);
    expect(r.text).toContain('finished');
  });

  it("fills a tool's arguments by the names its schema offers (OpenCode's read takes filePath, OpenClaw's and Pi's path)", () => {
    const read = (prop: string) => ({ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { [prop]: { type: 'string' } } } } });
    for (const prop of ['filePath', 'path']) {
      const body = { model: 'm', tools: [read(prop)], messages: [{ role: 'user', content: '[SUB:A] Read the file notes.txt in /w and report its first line.' }] };
      const r = decide(DEFAULT_SCRIPT, conversationOf('openai-chat-completions', body));
      expect(r.calls).toEqual([{ name: 'read', input: { [prop]: './notes.txt' }, custom: false }]); // no working directory in this body: '.'
    }
  });

  it("OpenClaw's re-appended internal context is not a user turn; a sub-agent's completion event gets one closing answer", () => {
    const internal = { role: 'user', content: [{ type: 'text', text: '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n"[SUB:A] Read the file notes.txt"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>' }] };
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
    const completion = { role: 'user', content: 'A background task completed. Use this result to reply to the user.\n\nChild result:\nSub-agent A result: BLUEBIRD' };
    const body = { model: 'm', tools, messages: [{ role: 'user', content: '[MAIN:single] delegate' }, { role: 'assistant', content: 'Done.' }, completion, internal] };
    const r = decide(DEFAULT_SCRIPT, conversationOf('openai-chat-completions', body));
    expect(r).toMatchObject({ scenario: 'openclaw-completion', calls: [] });
    expect(r.text).toContain('Sub-agent A result: BLUEBIRD');
  });

  it('says so when no offered tool fits, instead of calling a tool that does not exist', () => {
    const r = decide(DEFAULT_SCRIPT, conversationOf('anthropic-messages', { model: 'm', tools: [], messages: [{ role: 'user', content: '[MAIN:single]' }] }));
    expect(r.calls).toEqual([]);
    expect(r.text).toMatch(/^SCRIPT ERROR: none of Agent, Task/);
  });

  it('even_if_absent: an offered alternative still wins; with none offered, the marked one is called anyway (a model naming a tool it was not given)', () => {
    const script = Script.parse({
      scenarios: [{ name: 'g', match: '[G]', turns: [{ tool_calls: [[{ name: 'Agent', input: { prompt: 'p' } }, { name: 'task', input: { prompt: 'p' }, even_if_absent: true }]] }] }],
      fallback: { text: 'x' },
    });
    const ask = (tools: object[]) => decide(script, conversationOf('anthropic-messages', { model: 'm', tools, messages: [{ role: 'user', content: '[G]' }] })).calls.map((c) => c.name);
    expect(ask([agentTool])).toEqual(['Agent']);
    expect(ask([{ name: 'task', input_schema: { type: 'object' } }])).toEqual(['task']);
    expect(ask([{ name: 'read', input_schema: { type: 'object' } }])).toEqual(['task']);
    // The default script's [SUB:G] (OpenCode's child past subagent_depth): task, though the child is offered no task tool.
    const child = decide(DEFAULT_SCRIPT, conversationOf('openai-chat-completions', { model: 'm', tools: [{ type: 'function', function: { name: 'read', parameters: {} } }], messages: [{ role: 'user', content: '[SUB:G] go' }] }));
    expect(child.calls.map((c) => c.name)).toEqual(['task']);
  });
});
