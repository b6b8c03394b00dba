import type { RecordedError } from '../../schemas/common.js';
import type { Protocol } from '../../schemas/call.js';
import type { BodyDelta } from './body-delta.js';
import type { NativeIdentityHeaders } from './headers.js';

/**
 * The wire log: everything the proxy saw, in one append-only file per capture — the source of truth that calls,
 * wire traces and `reprocess --from-wire` are projected from, by the same code live and offline.
 *
 * A frame is a JSON header line `{"c":call_id,"k":kind,"n":bytes[,"m":meta]}` followed by exactly `n`
 * raw bytes and a '\n'. Kinds, in the order they occur for one call (calls interleave):
 *   q  the request: meta RequestMeta, bytes = the body as received (still content-encoded), or with
 *      meta.delta the bytes that differ from an earlier body (body-delta.ts; published logs), or with
 *      meta.body_streamed its first bytes only
 *   b  more of a streamed request body (a body too large to hold whole: each chunk logged before it is forwarded);
 *      the last one has meta `{"end":true}` and no bytes. Readers give back one q frame with the whole body.
 *   r  the response head: meta ResponseHeadMeta, no bytes
 *   d  response bytes as received (HTTP: a body chunk, still content-encoded; WebSocket: one text message)
 *   x  the end of the exchange: meta EndMeta, no bytes; exactly one per call, last
 * Logs of roller versions that wrote with direct I/O may end in NUL bytes (a padded last block): readers take them
 * as the end of the log.
 */
export const WIRE_LOG_FILE = 'raw/wire.frames';

/**
 * q request, b streamed body chunk, r response head, d response data, x end, u a WebSocket message from the client that
 * is not a request (in pieces when large: `part` 0, 1, … and `last` on the final one).
 */
export type FrameKind = 'q' | 'b' | 'r' | 'd' | 'x' | 'u';

export interface RequestMeta {
  seq: number;
  transport: 'http' | 'websocket';
  protocol: Protocol;
  method: string;
  path: string;
  upstream_path: string;
  /** Epoch milliseconds (formatted by the projection, not on the request path). */
  started_at: number;
  identity: NativeIdentityHeaders;
  dropped: string[];
  content_encoding?: string;
  /** The body continues in b frames (live logs only: readers join them). */
  body_streamed?: boolean;
  /** Set when the body is not in the frame (and why). */
  body_omitted?: string;
  /** The frame holds only what differs from a recent body (readers give back the whole body). */
  delta?: BodyDelta;
  /**
   * In a published capture: the frame holds no bytes, the body is the call's context in calls.jsonl
   * (seeds/000: a request body is not stored a second time). Readers resolve it with `bodies`.
   */
  body_ref?: BodyRef;
}

export interface BodyRef {
  file: 'calls.jsonl';
  call_id: string;
  /** JSON pointer into the call record. */
  pointer: '/context';
  /** The content-encoding the body had on the wire (the reference is to the decoded JSON). */
  wire_content_encoding?: string;
}

export interface ResponseHeadMeta {
  status: number;
  /** Response headers, credentials (set-cookie) removed. */
  headers: Record<string, string | string[] | undefined>;
}

export interface EndMeta {
  /** Epoch milliseconds. */
  first_byte_at: number | null;
  ended_at: number;
  upstream_ended: boolean;
  client_aborted: boolean;
  upstream_error: string | null;
  errors: RecordedError[];
}
