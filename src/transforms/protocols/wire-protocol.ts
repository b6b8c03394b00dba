import type { Protocol } from '../../schemas/call.js';
import type { ResponseDecoder } from './types.js';

type Json = Record<string, any>;

/**
 * What roller knows of one model API protocol, behind one interface: where it is served, how its responses are
 * decoded, and the few facts the capture layer and the audits read from its request and response shapes. A new
 * protocol is one implementation of this (and its decoder), added to PROTOCOLS.
 */
export interface WireProtocol {
  readonly name: Exclude<Protocol, 'other'>;
  /** The endpoint, tested on the request path without its query and trailing slashes. */
  readonly path: RegExp;
  createDecoder(): ResponseDecoder;
  /** The finish reason a reassembled response declares (null when it declares none). */
  finishReason(output: Json): string | null;
  /** The response holds a non-empty answer or a tool call. */
  hasAnswerOrToolCall(output: Json): boolean;
  /** The response's answer text (its text parts joined). */
  outputText(output: Json): string;
  /** The tool-call ids whose results a request body carries. */
  toolResultIds(body: Json): Set<string>;
  /** The text of each user message a request body carries, in order (what harnesses' delivery recognisers read). */
  userTexts(body: Json): string[];
  /** What a request gave the model besides the conversation: its system prompt (one string) and its tools as ACTF spells them. */
  systemAndTools(body: Json): { system: string; tools: Json[] };
}

/** A message content as text: a string, or the text parts of a block array joined by newlines. */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return (c as Json[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n');
  return '';
}
