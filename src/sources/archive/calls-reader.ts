import { open } from '../../core/thread-fs.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { LineSplitter } from '../../core/line-splitter.js';
import type { Call } from '../../schemas/call.js';
import { z } from 'zod';
import { formatJsonPath } from '../../core/json-locate.js';
import { CALL_SCHEMA } from '../../schemas/call.js';
import { checkValue } from '../../schemas/validate.js';
import { fieldsOf, rawContextBytesOf, withLazyContext } from '../../schemas/call-context.js';
import type { ReadArena } from '../../core/read-arena.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CONTEXT_KEY = Buffer.from('"context"');

/**
 * Where the top-level "context" member of a JSON object line starts: the comma (or brace) before its key,
 * and its value. A byte scan that tracks strings and depth, so it stops after the metadata and the
 * response — roller writes the context last — and never walks the request body. null: no such member.
 */
export function findContextMember(buf: Buffer, start: number, end: number): { keyFrom: number; valueFrom: number } | null {
  let depth = 0;
  let expectKey = false;
  let lastSeparator = -1;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      if (depth === 1 && expectKey && buf.compare(CONTEXT_KEY, 0, CONTEXT_KEY.length, i, i + CONTEXT_KEY.length) === 0) {
        let j = i + CONTEXT_KEY.length;
        while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
        if (buf[j] === 0x3a /* : */) {
          j++;
          while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
          return { keyFrom: lastSeparator, valueFrom: j };
        }
      }
      // skip the string
      for (i++; i < end && buf[i] !== QUOTE; i++) if (buf[i] === BACKSLASH) i++;
      if (depth === 1) expectKey = false;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth === 1) {
        expectKey = true;
        lastSeparator = i;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    else if (c === 0x2c /* , */ && depth === 1) {
      expectKey = true;
      lastSeparator = i;
    }
  }
  return null;
}

/** What every reader needs of a call besides its context; checked at the boundary (the context is not read). */
const CallHead = z.looseObject({ schema: z.literal(CALL_SCHEMA), protocol: z.string(), native_identity: z.looseObject({}) });

export interface ReadCallsOptions {
  /** What to do about a line that is not a call record (the end of its error message). */
  hint?: string;
  code?: ErrorCode;
  /** Read into this arena instead of fresh buffers (the contexts are views into it: see ReadArena's contract). */
  arena?: ReadArena;
}

/**
 * The calls of a calls.jsonl, each with its request context kept as bytes until read (withLazyContext):
 * only the metadata and response of each line are decoded and parsed (roller writes the context last; a line in
 * another layout, whose head then lacks required members, is parsed whole). A line that is not a call record —
 * bad JSON, cut short, not a roller.call/v1 head — is a typed error naming file and line.
 */
export async function readCallsLazily(path: string, options: ReadCallsOptions = {}): Promise<Call[]> {
  const calls: Call[] = [];
  // Arena chunks are kept and laid end to end: a line across two of them is a view, not a copy.
  const splitter = new LineSplitter(1 << 30, { stableChunks: options.arena !== undefined });
  const hint = options.hint ?? "the archive's calls.jsonl is damaged there";
  const bad = (line: number, why: string) => new RollerError(options.code ?? ErrorCode.JSONL_INVALID_JSON, `${path}:${line}: ${why}; ${hint}`, { origin: { file: path, line } });
  let failure: RollerError | undefined;
  let unparsable = false;
  const onLine = (buf: Buffer, start: number, end: number, line: number) => {
    if (failure) return;
    while (end > start && (buf[end - 1] === 0x0d || buf[end - 1] === 0x20)) end--;
    if (end === start) return;
    let call: Call;
    try {
      const member = findContextMember(buf, start, end);
      if (member && buf[end - 1] === 0x7d) {
        const head = member.keyFrom === start ? '{}' : `${buf.toString('utf8', start, member.keyFrom)}}`;
        call = JSON.parse(head) as Call;
        withLazyContext(call, buf.subarray(member.valueFrom, end - 1), `${path}:${line}`);
      } else {
        call = JSON.parse(buf.toString('utf8', start, end)) as Call;
      }
    } catch (err) {
      failure = bad(line, `not valid JSON (${(err as Error).message})`);
      unparsable = true;
      return;
    }
    let issues = call && typeof call === 'object' ? checkValue(CallHead, fieldsOf(call)) : [{ path: [], message: 'not an object' }];
    if (issues.length > 0 && rawContextBytesOf(call)) {
      // Not roller's layout (members after the context): the whole line, parsed the ordinary way.
      try {
        call = JSON.parse(buf.toString('utf8', start, end)) as Call;
        issues = checkValue(CallHead, fieldsOf(call));
      } catch {
        // keep the head's issues
      }
    }
    if (issues.length > 0) failure = bad(line, `not a roller.call/v1 record (${issues.map((i) => `${formatJsonPath(i.path as (string | number)[])}: ${i.message}`).join('; ')})`);
    else calls.push(call);
  };
  const handle = await open(path, 'r');
  try {
    let left = (await handle.stat()).size;
    options.arena?.reserve(left + (64 << 10)); // the reads below take at most the file and one 64 KB read past its end
    for (;;) {
      // A chunk per read that is never reused while the calls live: contexts are kept as views into it, never
      // copied. From the arena when there is one (the whole file, in order), else a fresh buffer.
      const size = Math.min(4 << 20, Math.max(64 << 10, left));
      const chunk = options.arena ? options.arena.take(size) : Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      options.arena?.giveBack(chunk, bytesRead);
      if (bytesRead === 0) break;
      left -= bytesRead;
      splitter.push(chunk.subarray(0, bytesRead), { line: onLine, oversize: () => undefined });
      if (failure) throw failure;
    }
    const tail = splitter.finish();
    if (tail && tail.buf.length > 0) {
      onLine(tail.buf, 0, tail.buf.length, tail.lineNo);
      // Invalid JSON at the very end, without a newline: a write cut short, not a wrong file.
      if (failure && unparsable) throw new RollerError(ErrorCode.JSONL_TRUNCATED_LINE, `${path}:${tail.lineNo}: the last line is cut short (no newline, not valid JSON); ${hint}`, { origin: { file: path, line: tail.lineNo } });
      if (failure) throw failure;
    }
  } finally {
    await handle.close();
  }
  return calls;
}
