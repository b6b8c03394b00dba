/** Anthropic Messages: a whole message object as the SSE events of SSE.md §1. */
type Json = Record<string, any>;

export function sseFrame(event: string | undefined, data: unknown): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

export function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out.length > 0 ? out : [''];
}

export function* anthropicEvents(message: Json): Generator<string> {
  const usage: Json = message.usage ?? {};
  const ev = (type: string, data: Json) => sseFrame(type, { type, ...data });
  yield ev('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  yield ev('ping', {});
  const content: Json[] = message.content ?? [];
  for (const [index, b] of content.entries()) {
    if (b.type === 'text') {
      yield ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of pieces(b.text, 24)) yield ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
    } else if (b.type === 'thinking') {
      yield ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of pieces(b.thinking, 24)) yield ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
      yield ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'tool_use') {
      yield ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      yield ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const partial_json of pieces(JSON.stringify(b.input), 20)) yield ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    } else {
      yield ev('content_block_start', { index, content_block: b }); // result blocks arrive whole
    }
    yield ev('content_block_stop', { index });
  }
  yield ev('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence ?? null },
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    },
  });
  yield ev('message_stop', {});
}
