import { isUtf8 } from 'node:buffer';
import { ErrorCode } from '../../core/errors.js';
import type { Call } from '../../schemas/call.js';
import { createDecoder } from '../../transforms/protocols/index.js';
import { decodeBody } from '../../transforms/protocols/decode-body.js';
import { ResponsesDecoder } from '../../transforms/protocols/responses.js';
import { isObject } from '../../transforms/protocols/types.js';
import { buildCallRecord, modelOf, type Exchange } from './call-record.js';
import { ResponseTap } from '../../transforms/protocols/response-tap.js';
import type { WireFrame } from './wire-frames.js';
import type { EndMeta, RequestMeta, ResponseHeadMeta } from './wire-format.js';

export interface ProjectCallsOptions {
  /** What Call.response_path says (the wire log, relative to the capture directory). */
  responsePath: string;
  maxJsonResponseBytes?: number;
  maxEventBytes?: number;
}

interface Open {
  x: Exchange;
  transport: RequestMeta['transport'];
  tap?: ResponseTap;
  ws?: ResponsesDecoder;
}

/**
 * Wire frames to roller.call/v1 records, one per exchange, in the order exchanges end. Live capture
 * runs it behind the proxy (following the log as it grows) and `roller reprocess` runs it over an
 * archive: the same decoding, the same records. An exchange the log never ends (the proxy was killed)
 * still yields its call, interrupted, with what was captured.
 */
export async function* projectCalls(frames: AsyncIterable<WireFrame>, options: ProjectCallsOptions): AsyncGenerator<Call> {
  const open = new Map<string, Open>();
  for await (const f of frames) {
    if (f.k === 'q') {
      open.set(f.c, { x: exchangeOf(f.c, f.m as RequestMeta, f.body, options.responsePath), transport: (f.m as RequestMeta).transport });
      continue;
    }
    const o = open.get(f.c);
    if (!o) continue; // a frame of a call whose request is not in this log (cut at the front): nothing to attach it to
    if (f.k === 'r') {
      const head = f.m as ResponseHeadMeta;
      o.x.httpStatus = head.status;
      if (o.transport === 'websocket') o.ws = new ResponsesDecoder();
      else {
        o.tap = new ResponseTap(createDecoder(o.x.protocol), head.headers, {
          maxJsonBytes: options.maxJsonResponseBytes ?? 64 << 20,
          ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
          onError: (e) => o.x.errors.push(e),
        });
      }
    } else if (f.k === 'd') {
      if (o.ws) websocketEvent(o, f.body);
      else o.tap?.push(f.body);
    } else if (f.k === 'u') {
      continue; // a client's WebSocket message that is not a request: evidence in the log, no part of the call
    } else {
      const end = f.m as EndMeta;
      o.x.firstByteAt = end.first_byte_at === null ? null : iso(end.first_byte_at);
      o.x.endedAt = iso(end.ended_at);
      o.x.upstreamEnded = end.upstream_ended;
      o.x.clientAborted = end.client_aborted;
      o.x.upstreamError = end.upstream_error;
      o.x.errors.push(...end.errors);
      open.delete(f.c);
      yield await finish(o);
    }
  }
  for (const o of open.values()) {
    o.x.unfinished = true;
    o.x.errors.push({ code: ErrorCode.WIRE_LOG_INCOMPLETE, message: 'the wire log ends before this exchange did (the proxy stopped mid-exchange); what was captured is kept' });
    yield await finish(o);
  }
}

async function finish(o: Open): Promise<Call> {
  if (o.x.httpStatus === null) o.x.responsePath = null;
  if (o.ws) o.x.decoded = o.ws.finish();
  else if (o.tap) o.x.decoded = await o.tap.finish();
  return buildCallRecord(o.x);
}

function websocketEvent(o: Open, body: Buffer): void {
  try {
    const event: unknown = JSON.parse(body.toString('utf8'));
    if (isObject(event)) o.ws!.frame(event);
  } catch {
    o.x.errors.push({ code: ErrorCode.STREAM_ANOMALY, message: 'a WebSocket text frame is not JSON' });
  }
}

function exchangeOf(callId: string, m: RequestMeta, body: Buffer, responsePath: string): Exchange {
  const x: Exchange = {
    callId, seq: m.seq, protocol: m.protocol, method: m.method, path: m.path, upstreamPath: m.upstream_path, startedAt: iso(m.started_at),
    firstByteAt: null, endedAt: null, httpStatus: null, identity: m.identity, droppedHeaders: m.dropped, context: undefined, decoded: null,
    upstreamEnded: false, clientAborted: false, upstreamError: null, responsePath, errors: [],
  };
  if (m.body_omitted !== undefined) return x;
  if (body.length === 0) {
    x.context = null;
    return x;
  }
  try {
    const bytes = decodeBody(body, m.content_encoding);
    const text = bytes.toString('utf8');
    const context: unknown = JSON.parse(text);
    // A body on one line goes to calls.jsonl and the wire trace as bytes (~25 KB a call in the bench: as a string
    // it was concatenated, flattened and encoded again for each sink), and the call's context stays those bytes
    // until read: the parse above is the check, its result dies young. The bytes received when they are valid
    // UTF-8 (`bytes` is the log reader's: a view of a read buffer it never writes again, or a delta's own copy),
    // else the text's (U+FFFD for what was not). A body on several lines is kept parsed, written re-serialized.
    if (bytes.indexOf(10) === -1 && bytes.indexOf(13) === -1) {
      x.contextBytes = isUtf8(bytes) ? bytes : Buffer.from(text, 'utf8');
      x.requestModel = modelOf(context);
    } else x.context = context;
  } catch (err) {
    x.errors.push({ code: ErrorCode.BODY_DECODE_FAILED, message: `request body not recorded as JSON: ${(err as Error).message}` });
  }
  return x;
}

const iso = (ms: number): string => new Date(ms).toISOString();
