import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropicEvents } from '../../../src/sources/scripted-model/encode-anthropic.js';
import { chatChunks, responsesEvents } from '../../../src/sources/scripted-model/encode-openai.js';
import { decodeSseChunks, protocolOfPath } from '../../../src/transforms/protocols/index.js';
import { repoRoot } from '../../support/paths.js';

type Json = Record<string, any>;

// The scripted responses the real Claude Code CLI got in the lab run (tests/fixtures/claude-code/PROVENANCE.md).
const labResponses = join(repoRoot, 'tests/fixtures/claude-code/lab-scripted-responses.json');
const claudeMessages: Json[] = (JSON.parse(readFileSync(labResponses, 'utf8')) as Json[]).map((r) => r.message as Json);

const chatCompletion: Json = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1764489600,
  model: 'scripted-chat',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Reading the notes, and listing files.',
        reasoning_content: 'Two tools at once.',
        tool_calls: [
          { id: 'call_0001', type: 'function', function: { name: 'read', arguments: '{"filePath":"/w/notes.txt"}' } },
          { id: 'call_0002', type: 'function', function: { name: 'task', arguments: '{"description":"Inspect","prompt":"SUBAGENT: read notes.txt","subagent_type":"general"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240, prompt_tokens_details: { cached_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 8 } },
};

const response: Json = {
  id: 'resp_1',
  object: 'response',
  created_at: 1764489600,
  model: 'scripted-responses',
  status: 'completed',
  output: [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'I will spawn a helper.' }] },
    { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_abc', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"[SUB:A] read notes.txt"}' },
    { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_def', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
    { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Spawned.', annotations: [] }] },
  ],
  usage: { input_tokens: 5175, input_tokens_details: { cached_tokens: 2587 }, output_tokens: 41, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 5216 },
};

/** Split a byte stream at arbitrary cut points. */
function rechunk(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

describe('protocol from the endpoint', () => {
  it.each([
    ['/v1/messages', 'anthropic-messages'],
    ['/v1/messages/count_tokens', 'other'],
    ['/v1/chat/completions', 'openai-chat-completions'],
    ['/api/v1/chat/completions', 'openai-chat-completions'],
    ['/v1/responses', 'openai-responses'],
    ['/v1/models', 'other'],
  ])('%s -> %s', (path, protocol) => expect(protocolOfPath(path)).toBe(protocol));
});

describe('golden reassembly', () => {
  it('reassembles every scripted Claude Code response of the lab run exactly (thinking signature byte-exact)', () => {
    expect(claudeMessages.length).toBeGreaterThanOrEqual(4);
    for (const message of claudeMessages) {
      const decoded = decodeSseChunks('anthropic-messages', anthropicEvents(message));
      expect(decoded.complete).toBe(true);
      expect(decoded.anomalies).toEqual([]);
      expect(decoded.output).toEqual(message);
      expect(decoded.responseId).toBe(message.id);
      expect(decoded.toolRefs).toEqual(message.content.filter((b: Json) => b.type === 'tool_use').map((b: Json) => ({ id: b.id, name: b.name })));
      expect(decoded.usage).toEqual({
        input: message.usage.input_tokens,
        cached_input: message.usage.cache_read_input_tokens,
        cache_creation: message.usage.cache_creation_input_tokens,
        output: message.usage.output_tokens,
        reasoning: 0,
      });
    }
  });

  it('reassembles a Chat Completions stream with parallel tool calls split across chunks, reasoning and a usage chunk', () => {
    const decoded = decodeSseChunks('openai-chat-completions', chatChunks(chatCompletion));
    expect(decoded.complete).toBe(true);
    expect(decoded.output).toEqual(chatCompletion);
    expect(decoded.toolRefs).toEqual([
      { id: 'call_0001', name: 'read' },
      { id: 'call_0002', name: 'task' },
    ]);
    expect(decoded.usage).toEqual({ input: 200, cached_input: 1000, cache_creation: 0, output: 40, reasoning: 8 });
  });

  it('reassembles a Responses stream: reasoning summary, namespaced function_call, custom tool call, message', () => {
    const decoded = decodeSseChunks('openai-responses', responsesEvents(response));
    expect(decoded.complete).toBe(true);
    expect(decoded.anomalies).toEqual([]);
    expect(decoded.output).toEqual(response);
    expect(decoded.toolRefs).toEqual([
      { id: 'call_abc', name: 'multi_agent_v1/spawn_agent', item_id: 'fc_1' },
      { id: 'call_def', name: 'apply_patch', item_id: 'ctc_1' },
    ]);
    expect(decoded.usage).toEqual({ input: 2588, cached_input: 2587, cache_creation: 0, output: 41, reasoning: 12 });
  });
});

describe('any re-chunking of an SSE byte stream gives the same decoded response (property)', () => {
  const cases: [string, Parameters<typeof decodeSseChunks>[0], Buffer][] = [
    ...claudeMessages.map((m, i): [string, 'anthropic-messages', Buffer] => [`claude ${i}`, 'anthropic-messages', Buffer.from([...anthropicEvents(m)].join(''))]),
    ['chat', 'openai-chat-completions', Buffer.from([...chatChunks(chatCompletion)].join(''))],
    ['responses', 'openai-responses', Buffer.from([...responsesEvents(response)].join(''))],
  ];
  it.each(cases)('%s', (_name, protocol, bytes) => {
    const whole = decodeSseChunks(protocol, [bytes]);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 60 }), fc.boolean(), (cuts, crlf) => {
        const input = crlf ? Buffer.from(bytes.toString('utf8').replace(/\n/g, '\r\n')) : bytes;
        expect(decodeSseChunks(protocol, rechunk(input, cuts))).toEqual(whole);
      }),
      { numRuns: 150 },
    );
  });
});

describe('broken streams are recorded, never thrown', () => {
  const message = claudeMessages[0]!;
  const events = [...anthropicEvents(message)];

  it('a stream cut before message_stop is incomplete, with what arrived kept', () => {
    const decoded = decodeSseChunks('anthropic-messages', events.slice(0, 6));
    expect(decoded.complete).toBe(false);
    expect(decoded.incompleteReasons).toContain('the stream ended before message_stop');
    expect(decoded.responseId).toBe(message.id);
  });

  it('an error event after the 200 ends the response as incomplete with the error', () => {
    const err = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const decoded = decodeSseChunks('anthropic-messages', [...events.slice(0, 4), err]);
    expect(decoded.complete).toBe(false);
    expect(decoded.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
  });

  it('duplicate message_start, a delta for an unopened block, bad JSON and unknown events become anomalies', () => {
    const decoded = decodeSseChunks('anthropic-messages', [
      events[0]!,
      events[0]!,
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"orphan"}}\n\n',
      'event: content_block_delta\ndata: {not json\n\n',
      'event: brand_new_event\ndata: {"type":"brand_new_event"}\n\n',
      ...events.slice(1),
    ]);
    expect(decoded.anomalies.join('\n')).toMatch(/duplicate message_start/);
    expect(decoded.anomalies.join('\n')).toMatch(/never opened/);
    expect(decoded.anomalies.join('\n')).toMatch(/not valid JSON/);
    expect(decoded.unknownEvents).toBe(1);
    expect((decoded.output as Json).content.some((b: Json) => b.text === 'orphan')).toBe(true);
  });

  it('a Chat response with finish_reason tool_calls but no tool call id or name is incomplete', () => {
    const chunk = (o: Json) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', ...o })}\n\n`;
    const decoded = decodeSseChunks('openai-chat-completions', [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      'data: [DONE]\n\n',
    ]);
    expect(decoded.complete).toBe(false);
    expect(decoded.incompleteReasons).toEqual(['choice 0: finish_reason tool_calls without a tool call id and name']);
  });

  it('a Responses stream cut mid-item rebuilds the item from deltas and says so', () => {
    const all = [...responsesEvents(response)];
    const cut = all.findIndex((e) => e.includes('function_call_arguments.done'));
    const decoded = decodeSseChunks('openai-responses', all.slice(0, cut));
    expect(decoded.complete).toBe(false);
    const items = (decoded.output as Json).output as Json[];
    expect(items[1]).toMatchObject({ type: 'function_call', arguments: response.output[1].arguments, status: 'incomplete' });
  });

  it('an event over maxEventBytes is skipped and reported, the rest decoded', () => {
    const big = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x'.repeat(5000) } })}\n\n`;
    const decoded = decodeSseChunks('anthropic-messages', [events[0]!, big, ...events.slice(1)], 1000);
    expect(decoded.anomalies.some((a) => a.includes('maxEventBytes'))).toBe(true);
    expect(decoded.complete).toBe(true);
  });
});

describe('Anthropic server tools and citations', () => {
  it('keeps server_tool_use input, a whole result block, and citations on the text block', () => {
    const ev = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const decoded = decodeSseChunks('anthropic-messages', [
      ev('message_start', { message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, cache_read_input_tokens: 0 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"roller"}' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.org', title: 'x' }] } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Found it.' } }),
      ev('content_block_delta', { index: 2, delta: { type: 'citations_delta', citation: { type: 'web_search_result_location', url: 'https://example.org' } } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9, server_tool_use: { web_search_requests: 1 } } }),
      ev('message_stop', {}),
    ]);
    expect(decoded.complete).toBe(true);
    const content = (decoded.output as Json).content as Json[];
    expect(content[0]).toEqual({ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'roller' } });
    expect(content[1]!.type).toBe('web_search_tool_result');
    expect(content[2]).toEqual({ type: 'text', text: 'Found it.', citations: [{ type: 'web_search_result_location', url: 'https://example.org' }] });
    expect(decoded.toolRefs).toEqual([{ id: 'srvtoolu_1', name: 'web_search' }]);
    expect(decoded.usageReported).toEqual({ input_tokens: 3, cache_read_input_tokens: 0, output_tokens: 9, server_tool_use: { web_search_requests: 1 } });
  });
});
