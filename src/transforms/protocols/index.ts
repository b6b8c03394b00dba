import type { Protocol } from '../../schemas/call.js';
import { AnthropicDecoder } from './anthropic.js';
import { ChatDecoder } from './chat.js';
import { ResponsesDecoder } from './responses.js';
import type { ResponseDecoder } from './types.js';
import { SseParser } from './sse-parser.js';

export * from './anthropic.js';
export * from './chat.js';
export * from './responses.js';
export * from './sse-parser.js';
export * from './types.js';
export * from './decode-body.js';
export * from './response-tap.js';

/** The protocol comes from the endpoint only — never from the body or the harness's claim. */
export function protocolOfPath(pathname: string): Protocol {
  const p = pathname.replace(/\/+$/, '');
  if (/(^|\/)v1\/messages$/.test(p)) return 'anthropic-messages';
  if (/(^|\/)chat\/completions$/.test(p)) return 'openai-chat-completions';
  if (/(^|\/)responses$/.test(p)) return 'openai-responses';
  return 'other';
}

export function createDecoder(protocol: Protocol): ResponseDecoder | undefined {
  switch (protocol) {
    case 'anthropic-messages':
      return new AnthropicDecoder();
    case 'openai-chat-completions':
      return new ChatDecoder();
    case 'openai-responses':
      return new ResponsesDecoder();
    default:
      return undefined;
  }
}

/** Decode a whole SSE byte stream (any chunking) with a fresh decoder for `protocol`. */
export function decodeSseChunks(protocol: Protocol, chunks: Iterable<Buffer | string>, maxEventBytes?: number) {
  const decoder = createDecoder(protocol);
  if (!decoder) throw new Error(`no decoder for protocol '${protocol}'`);
  const parser = new SseParser({ event: (e) => decoder.event(e), anomaly: (a) => decoder.sseAnomaly(a) }, maxEventBytes);
  for (const c of chunks) parser.push(c);
  parser.end();
  return decoder.finish();
}
