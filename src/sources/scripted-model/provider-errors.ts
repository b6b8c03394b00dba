import type { IncomingMessage } from 'node:http';
import type { Protocol } from '../../schemas/call.js';

type Json = Record<string, any>;

/** An error a provider's API answers with, in the shape of its protocol (Anthropic's `type: error`, OpenAI's `error`). */
export interface ProviderError {
  status: number;
  body: Json;
  headers: Record<string, string>;
}

const ANTHROPIC_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 500: 'api_error', 503: 'api_error', 529: 'overloaded_error' };
const OPENAI_TYPES: Record<number, [string, string | null]> = { 400: ['invalid_request_error', null], 401: ['invalid_request_error', 'invalid_api_key'], 404: ['invalid_request_error', 'model_not_found'], 429: ['rate_limit_error', 'rate_limit_exceeded'], 500: ['server_error', null], 503: ['server_error', null] };

export function providerError(protocol: Protocol, status: number, message: string, retryAfterS?: number): ProviderError {
  const headers: Record<string, string> = retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) };
  if (protocol === 'anthropic-messages') return { status, body: { type: 'error', error: { type: ANTHROPIC_TYPES[status] ?? 'api_error', message } }, headers };
  const [type, code] = OPENAI_TYPES[status] ?? ['server_error', null];
  return { status, body: { error: { message, type, param: null, code } }, headers };
}

/** The key a request carries, as a provider reads it: `x-api-key` (Anthropic) or `Authorization: Bearer` (both). */
export function presentedKey(req: IncomingMessage): string | undefined {
  const xKey = req.headers['x-api-key'];
  if (typeof xKey === 'string') return xKey;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m?.[1];
}

/**
 * What a provider refuses before answering: a missing or wrong key (401), a model it does not serve (404). `models`
 * empty: it serves any model name (as the embedded model does).
 */
export function admission(protocol: Protocol, req: IncomingMessage, model: unknown, gate: { requireKey?: string; models?: readonly string[] }): ProviderError | undefined {
  if (gate.requireKey !== undefined && presentedKey(req) !== gate.requireKey) {
    return providerError(protocol, 401, presentedKey(req) === undefined ? 'scripted model: no API key was sent' : 'scripted model: invalid API key');
  }
  if (gate.models && gate.models.length > 0 && !gate.models.includes(String(model))) {
    return providerError(protocol, 404, `scripted model: the model '${String(model)}' does not exist (served: ${gate.models.join(', ')})`);
  }
  return undefined;
}
