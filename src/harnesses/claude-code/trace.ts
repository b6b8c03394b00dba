import type { NativeRecord, NativeSession } from './native-session.js';

type Json = Record<string, any>;

export const CLAUDE_CODE_RAW_SCHEMA = 'claude-code-session-jsonl';

/**
 * trace.jsonl (seeds/003 §4.1): the main session and every sub-agent file, merged by timestamp and
 * deduplicated by native uuid. Records are kept whole (user, assistant with thinking, signature,
 * tool_use, usage; tool_result; sidechain fields; unknown types too) — this is the harness's raw, not a
 * training format. A record without a timestamp keeps its place after the record before it in its file.
 */
export function mergeTrace(session: NativeSession): Json[] {
  const keyed: { rec: NativeRecord; ts: number; file: number; order: number }[] = [];
  const files = [session.main, ...session.subagents.map((s) => s.records)];
  files.forEach((records, fileIndex) => {
    let last = Number.NEGATIVE_INFINITY;
    records.forEach((rec, order) => {
      const t = typeof rec.record.timestamp === 'string' ? Date.parse(rec.record.timestamp) : Number.NaN;
      if (!Number.isNaN(t)) last = t;
      keyed.push({ rec, ts: last, file: fileIndex, order });
    });
  });
  keyed.sort((a, b) => a.ts - b.ts || a.file - b.file || a.order - b.order);
  const seen = new Set<string>();
  const out: Json[] = [];
  for (const { rec } of keyed) {
    const uuid = rec.record.uuid;
    if (typeof uuid === 'string') {
      if (seen.has(uuid)) continue;
      seen.add(uuid);
    }
    out.push(rec.record);
  }
  return out;
}
