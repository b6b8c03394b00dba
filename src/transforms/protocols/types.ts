import type { NormalizedUsage } from '../../schemas/common.js';
import type { Protocol, ToolRef } from '../../schemas/call.js';
import type { SseAnomaly, SseEvent } from './sse-parser.js';

/** What a protocol decoder makes of one response: the output in the protocol's own shape, and facts. */
export interface DecodedResponse {
  protocol: Protocol;
  /** Reassembled like the protocol's non-streaming response; null when nothing was decodable. */
  output: unknown;
  /** The stream reached its terminal event (or the JSON body was whole) with no error event. */
  complete: boolean;
  /** Why it is not complete (empty when complete). */
  incompleteReasons: string[];
  /** An error event after the 200, or an error body. */
  error: { type: string | null; message: string | null } | null;
  responseId: string | null;
  responseModel: string | null;
  stopReason: string | null;
  usageReported: Record<string, unknown> | null;
  usage: NormalizedUsage | null;
  toolRefs: ToolRef[];
  /**
   * What an open-model server (vLLM, SGLang) sent of its tokens when asked: the prompt's ids, the first choice's sampled
   * ids and its log-probabilities (`{content: [{token, logprob, bytes?, top_logprobs?}]}`), taken out of `output`.
   */
  tokens?: CallTokens;
  /** Things a well-formed stream does not do (duplicate message_start, a delta for an unopened block...). */
  anomalies: string[];
  /** Events of types the decoder does not know: kept in the raw file, counted here, never fatal. */
  unknownEvents: number;
  events: number;
}

export interface CallTokens {
  prompt: number[] | null;
  completion: number[] | null;
  logprobs: { content: Json[] } | null;
}

export interface ResponseDecoder {
  readonly protocol: Protocol;
  event(e: SseEvent): void;
  sseAnomaly(a: SseAnomaly): void;
  /** A whole (non-streaming) JSON response body. */
  json(body: unknown): void;
  finish(): DecodedResponse;
}

/** Anomaly lists are bounded: a broken stream must not grow memory without limit. */
export const MAX_ANOMALIES = 100;

export class AnomalyLog {
  readonly items: string[] = [];
  private dropped = 0;
  add(message: string): void {
    if (this.items.length < MAX_ANOMALIES) this.items.push(message);
    else this.dropped++;
  }
  list(): string[] {
    return this.dropped === 0 ? this.items : [...this.items, `… and ${this.dropped} more`];
  }
}

export type Json = Record<string, any>;

export function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function num(x: unknown): number {
  return typeof x === 'number' && Number.isFinite(x) && x >= 0 ? Math.floor(x) : 0;
}

export function str(x: unknown): string | null {
  return typeof x === 'string' ? x : null;
}

/** Parse an SSE data payload; a payload that is not JSON is an anomaly, not an exception. */
export function parseData(e: SseEvent, anomalies: AnomalyLog): Json | undefined {
  try {
    const v: unknown = JSON.parse(e.data);
    if (isObject(v)) return v;
    anomalies.add(`event ${e.index}: data is not a JSON object`);
  } catch {
    anomalies.add(`event ${e.index}${e.event ? ` (${e.event})` : ''}: data is not valid JSON (${e.data.length} chars)`);
  }
  return undefined;
}

/** The {type, message} of an API error object (`type` or, for OpenAI-style errors, `code`). */
export function errorOf(e: unknown): { type: string | null; message: string | null } {
  const o = isObject(e) ? e : {};
  return { type: str(o.type) ?? str(o.code), message: str(o.message) };
}

/** What every decoder keeps: anomalies, counts, the error, a whole (non-streaming) body. */
export abstract class DecoderBase {
  protected readonly anomalies = new AnomalyLog();
  protected events = 0;
  protected unknownEvents = 0;
  protected error: DecodedResponse['error'] = null;
  protected whole: Json | null = null;

  sseAnomaly(a: { detail: string }): void {
    this.anomalies.add(`sse: ${a.detail}`);
  }

  /** The result, with the fields every protocol fills the same way. */
  protected result(
    protocol: DecodedResponse['protocol'],
    output: Json | null,
    reasons: string[],
    facts: Pick<DecodedResponse, 'stopReason' | 'usageReported' | 'usage' | 'toolRefs' | 'tokens'>,
  ): DecodedResponse {
    return {
      protocol,
      output,
      complete: reasons.length === 0,
      incompleteReasons: reasons,
      error: this.error,
      responseId: output ? str(output.id) : null,
      responseModel: output ? str(output.model) : null,
      ...facts,
      anomalies: this.anomalies.list(),
      unknownEvents: this.unknownEvents,
      events: this.events,
    };
  }
}
