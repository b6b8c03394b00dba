import { CALL_SCHEMA, type Call, type Protocol } from '../../schemas/call.js';
import type { RecordedError } from '../../schemas/common.js';
import type { DecodedResponse } from '../../transforms/protocols/types.js';
import type { NativeIdentityHeaders } from './headers.js';
import { withLazyContext } from '../../schemas/call-context.js';
import { ErrorCode } from '../../core/errors.js';

/** What the proxy knows about one exchange when it ends. */
export interface Exchange {
  callId: string;
  seq: number;
  protocol: Protocol;
  method: string;
  path: string;
  upstreamPath: string;
  startedAt: string;
  firstByteAt: string | null;
  endedAt: string | null;
  httpStatus: number | null;
  identity: NativeIdentityHeaders;
  droppedHeaders: string[];
  /** The parsed request body (undefined: not decoded; with contextBytes it is not kept, see there). */
  context: unknown;
  /**
   * Or the body's bytes, checked to be JSON, on one line and valid UTF-8: the call's context stays these bytes
   * until something reads it (withLazyContext), and writers splice them. No string of them is made, and no
   * parsed copy lives on through the sinks' queues into the old generation.
   */
  contextBytes?: Buffer;
  /** The body's `model`, read when it was checked (contextBytes). */
  requestModel?: string | null;
  decoded: DecodedResponse | null;
  /** The upstream body was read to its end. */
  upstreamEnded: boolean;
  /** The client went away before the response was complete. */
  clientAborted: boolean;
  /** Connecting to, or reading from, the upstream failed. */
  upstreamError: string | null;
  responsePath: string | null;
  errors: RecordedError[];
  /** The capture ended (the proxy stopped) before this exchange did. */
  unfinished?: boolean;
}

/**
 * The roller.call/v1 record of an exchange, with its statuses (seeds/000). Identity is left
 * unattributed here: only the capture layer, with native evidence, attributes a call.
 */
export function buildCallRecord(x: Exchange): Call {
  const reasons: Call['status_reasons'] = {};
  const d = x.decoded;

  let execution: Call['execution_status'] = 'completed';
  if (x.unfinished) {
    execution = 'interrupted';
    reasons.execution_status = 'the capture ended before this exchange did (the proxy stopped mid-exchange)';
  } else if (x.upstreamError) {
    execution = 'failed';
    reasons.execution_status = `upstream: ${x.upstreamError}`;
  } else if (x.clientAborted && !x.upstreamEnded) {
    execution = 'interrupted';
    reasons.execution_status = 'the client closed the connection before the response ended';
  } else if (x.httpStatus !== null && x.httpStatus >= 400) {
    execution = 'failed';
    reasons.execution_status = `HTTP ${x.httpStatus}${d?.error ? ` (${d.error.type ?? 'error'}: ${d.error.message ?? ''})` : ''}`;
  } else if (d && !d.complete) {
    execution = 'failed';
    reasons.execution_status = d.incompleteReasons.join('; ');
  }

  let capture: Call['response_capture_status'] = 'complete';
  if (x.httpStatus === null) {
    capture = 'missing';
    reasons.response_capture_status = 'no response was received';
  } else if (!x.upstreamEnded) {
    capture = 'partial';
    reasons.response_capture_status = 'the response body was cut before its end';
  } else if (d && !d.complete && x.httpStatus < 400) {
    capture = 'partial';
    reasons.response_capture_status = d.incompleteReasons.join('; ');
  }

  const decodedContext = x.context !== undefined || x.contextBytes !== undefined;
  const recordComplete = capture === 'complete' && decodedContext && x.errors.length === 0 && (d?.anomalies.length ?? 0) === 0;
  if (!recordComplete) {
    reasons.capture_status = [
      capture !== 'complete' ? `response ${capture}` : '',
      !decodedContext ? 'request body not decoded' : '',
      x.errors.length > 0 ? x.errors.map((e) => e.code).join(', ') : '',
      d && d.anomalies.length > 0 ? `${d.anomalies.length} stream anomalies` : '',
    ]
      .filter(Boolean)
      .join('; ');
  }
  reasons.identity_status = 'not attributed by the proxy (the capture layer joins calls to native participants)';
  reasons.export_status = 'a call is exportable only once attributed, complete and ended normally';

  const call: Call = {
    schema: CALL_SCHEMA,
    call_id: x.callId,
    seq: x.seq,
    protocol: x.protocol,
    method: x.method,
    path: x.path,
    upstream_path: x.upstreamPath,
    started_at: x.startedAt,
    first_byte_at: x.firstByteAt,
    ended_at: x.endedAt,
    http_status: x.httpStatus,
    participant_id: null,
    native_identity: x.identity,
    request_model: x.requestModel !== undefined ? x.requestModel : modelOf(x.context),
    response_model: d?.responseModel ?? null,
    response_id: d?.responseId ?? null,
    context: x.context ?? null,
    output: d?.output ?? null,
    usage: { reported: d?.usageReported ?? null, normalized: d?.usage ?? null },
    tool_refs: d?.toolRefs ?? [],
    response_path: x.responsePath,
    dropped_request_headers: x.droppedHeaders,
    execution_status: execution,
    response_capture_status: capture,
    identity_status: 'unattributed',
    capture_status: recordComplete ? 'complete' : 'partial',
    export_status: 'not_exportable',
    status_reasons: reasons,
    errors: [
      ...x.errors,
      ...(d?.anomalies ?? []).map((message) => ({ code: ErrorCode.STREAM_ANOMALY, message })),
    ],
    ...(d?.tokens ? { token_ids: { prompt: d.tokens.prompt, completion: d.tokens.completion }, logprobs: d.tokens.logprobs } : {}),
  };
  return x.contextBytes ? withLazyContext(call, x.contextBytes, `call ${x.callId}: the request body`) : call;
}

export function modelOf(context: unknown): string | null {
  if (context && typeof context === 'object' && typeof (context as { model?: unknown }).model === 'string') return (context as { model: string }).model;
  return null;
}
