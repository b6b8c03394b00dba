import type { ErrorCode, Origin } from './errors.js';

/**
 * A record a stage could not accept. It is routed (for example to rejects.jsonl) and counted,
 * never silently dropped.
 */
export interface Rejected {
  readonly stage: string;
  readonly code: ErrorCode;
  readonly reason: string;
  readonly origin: Origin;
  /** A bounded excerpt of the raw input, for a person to recognise it (never the whole body). */
  readonly excerpt?: string;
}

export const MAX_REJECT_EXCERPT_CHARS = 200;

export function excerpt(text: string): string {
  return text.length <= MAX_REJECT_EXCERPT_CHARS ? text : `${text.slice(0, MAX_REJECT_EXCERPT_CHARS)}…`;
}
