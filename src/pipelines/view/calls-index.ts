import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { LineSplitter } from '../../core/line-splitter.js';
import type { NormalizedUsage } from '../../schemas/common.js';
import { findContextMember } from '../../sources/archive/calls-reader.js';

/** What the sample page shows of a call: its small fields, and where its line is (the request body is never held). */
export interface CallSummary {
  call_id: string;
  seq: number;
  protocol: string;
  participant_id: string | null;
  model: string | null;
  started_at: string;
  first_byte_at: string | null;
  ended_at: string | null;
  http_status: number | null;
  usage: NormalizedUsage | null;
  tool_refs: { id: string; name: string }[];
  statuses: Record<string, string>;
  status_reasons: Record<string, string>;
  errors: number;
  /** The line's byte range in calls.jsonl. */
  at: { offset: number; length: number; line: number };
}

const MAX_LINE = 1 << 30;
const STATUS_KEYS = ['execution_status', 'response_capture_status', 'identity_status', 'capture_status', 'export_status'] as const;

/**
 * The calls of a calls.jsonl as summaries with their byte ranges, read once as a stream: only each line's head —
 * metadata and response, written before the request context — is parsed, so a 2,000-call capture with 1 MB bodies
 * costs its summaries, not its bodies. A line that is not a call is a typed error naming file and line.
 */
export async function indexCalls(path: string): Promise<CallSummary[]> {
  const calls: CallSummary[] = [];
  const splitter = new LineSplitter(MAX_LINE);
  let failure: RollerError | null = null;
  const sink = {
    line(buf: Buffer, start: number, end: number, line: number, offset: number) {
      if (failure || end === start) return;
      try {
        const member = findContextMember(buf, start, end);
        const text = member && member.keyFrom > start ? `${buf.toString('utf8', start, member.keyFrom)}}` : buf.toString('utf8', start, end);
        calls.push(summaryOf(JSON.parse(text) as Record<string, any>, { offset, length: end - start, line }));
      } catch (err) {
        failure = new RollerError(ErrorCode.JSONL_INVALID_JSON, `${path}:${line}: not a call record (${(err as Error).message})`, { origin: { file: path, line } });
      }
    },
    oversize(line: number) {
      failure = new RollerError(ErrorCode.JSONL_INVALID_JSON, `${path}:${line}: a line over 1 GiB`, { origin: { file: path, line } });
    },
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    splitter.push(chunk as Buffer, sink);
    if (failure) throw failure;
  }
  const last = splitter.finish();
  if (last) sink.line(last.buf, 0, last.buf.length, last.lineNo, last.offset);
  if (failure) throw failure;
  return calls;
}

function summaryOf(r: Record<string, any>, at: CallSummary['at']): CallSummary {
  if (typeof r.call_id !== 'string' || typeof r.seq !== 'number') throw new Error('no call_id or seq');
  return {
    call_id: r.call_id,
    seq: r.seq,
    protocol: String(r.protocol),
    participant_id: r.participant_id ?? null,
    model: r.response_model ?? r.request_model ?? null,
    started_at: r.started_at,
    first_byte_at: r.first_byte_at ?? null,
    ended_at: r.ended_at ?? null,
    http_status: r.http_status ?? null,
    usage: r.usage?.normalized ?? null,
    tool_refs: ((r.tool_refs ?? []) as { id: string; name: string }[]).map((t) => ({ id: t.id, name: t.name })),
    statuses: Object.fromEntries(STATUS_KEYS.map((k) => [k, String(r[k])])),
    status_reasons: r.status_reasons ?? {},
    errors: Array.isArray(r.errors) ? r.errors.length : 0,
    at,
  };
}

/** One call's whole record, read from its line's byte range. */
export async function readCallAt(path: string, at: CallSummary['at']): Promise<Record<string, unknown>> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(at.length);
    const { bytesRead } = await handle.read(buf, 0, at.length, at.offset);
    if (bytesRead !== at.length) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}:${at.line}: the file changed since it was indexed; reload the page`);
    return JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
  } finally {
    await handle.close();
  }
}
