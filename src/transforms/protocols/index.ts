import type { Protocol } from '../../schemas/call.js';
import { anthropicMessages } from './anthropic-protocol.js';
import { openAiChatCompletions } from './chat-protocol.js';
import { openAiResponses } from './responses-protocol.js';
import type { ResponseDecoder } from './types.js';
import { SseParser } from './sse-parser.js';
import type { WireProtocol } from './wire-protocol.js';

export * from './anthropic.js';
export * from './chat.js';
export * from './responses.js';
export * from './sse-parser.js';
export * from './types.js';
export * from './decode-body.js';
export * from './response-tap.js';
export { contentText, type WireProtocol } from './wire-protocol.js';

/** The protocols roller decodes, each one implementation (wire-protocol.ts). */
export const PROTOCOLS: readonly WireProtocol[] = [anthropicMessages, openAiChatCompletions, openAiResponses];

/** A protocol by name (undefined for 'other': a request roller forwards and records but does not decode). */
export function wireProtocol(name: Protocol): WireProtocol | undefined {
  return PROTOCOLS.find((p) => p.name === name);
}

/** The protocol comes from the endpoint only — never from the body or the harness's claim. */
export function protocolOfPath(pathname: string): Protocol {
  const p = pathname.replace(/\/+$/, '');
  return PROTOCOLS.find((w) => w.path.test(p))?.name ?? 'other';
}

export function createDecoder(protocol: Protocol): ResponseDecoder | undefined {
  return wireProtocol(protocol)?.createDecoder();
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
