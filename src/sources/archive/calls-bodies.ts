import { closeSync, openSync, readSync } from 'node:fs';
import type { BodyRef } from '../proxy/wire-format.js';

/**
 * Resolves body_refs against a calls.jsonl: one pass indexes each call's line (call id → offset, length);
 * a body is read and serialized only when asked for, so memory holds offsets, not contexts.
 */
export function callsJsonlBodies(path: string): (ref: BodyRef) => Buffer | undefined {
  const index = new Map<string, { offset: number; length: number }>();
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let carry = Buffer.alloc(0);
    let position = 0;
    let lineStart = 0; // file offset of carry[0]
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, position);
      const data = n === 0 ? carry : carry.length === 0 ? buf.subarray(0, n) : Buffer.concat([carry, buf.subarray(0, n)]);
      position += n;
      let at = 0;
      for (let nl = data.indexOf(10); nl !== -1 || (n === 0 && at < data.length); nl = data.indexOf(10, at)) {
        const end = nl === -1 ? data.length : nl;
        const id = callIdOf(data, at, end);
        if (id !== undefined) index.set(id, { offset: lineStart + at, length: end - at });
        at = end + 1;
        if (nl === -1) break;
      }
      if (n === 0) break;
      carry = Buffer.from(data.subarray(at));
      lineStart += at;
    }
  } finally {
    closeSync(fd);
  }
  return (ref) => {
    const where = index.get(ref.call_id);
    if (!where) return undefined;
    const line = Buffer.allocUnsafe(where.length);
    const fd2 = openSync(path, 'r');
    try {
      readSync(fd2, line, 0, where.length, where.offset);
    } finally {
      closeSync(fd2);
    }
    const context = (JSON.parse(line.toString('utf8')) as { context?: unknown }).context;
    return context === undefined || context === null ? undefined : Buffer.from(JSON.stringify(context), 'utf8');
  };
}

/** The call_id of a calls.jsonl line: its fields come first, so the id is near the start (never in the context). */
function callIdOf(data: Buffer, start: number, end: number): string | undefined {
  const key = data.indexOf('"call_id":"', start);
  if (key === -1 || key >= end) return undefined;
  const from = key + 11;
  const to = data.indexOf('"', from);
  return to === -1 || to >= end ? undefined : data.toString('utf8', from, to);
}
