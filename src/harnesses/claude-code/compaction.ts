import type { Call } from '../../schemas/call.js';

/**
 * One compaction of a Claude Code session, as its JSONL records it: a `system` record with subtype
 * `compact_boundary` (trigger, token counts, the messages kept verbatim), followed by a user record with
 * `isCompactSummary: true` whose text holds the summary the model wrote.
 */
export interface ClaudeCodeCompaction {
  /** uuid of the compact_boundary record. */
  boundaryUuid: string;
  trigger: string | null;
  /** uuid of the isCompactSummary user record; null when the session ends before it. */
  summaryUuid: string | null;
  /** The summary record's text (Claude Code's wrapper around the model's summary). */
  summaryText: string | null;
}

type Json = Record<string, any>;

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((b) => (b?.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('') : '';

/**
 * The compactions of the main session from its records (sub-agent records — sidechains — are not the main
 * context and are skipped), in the order of their boundaries. A summary record belongs to the boundary its
 * parentUuid chain leads to (attachments may sit between them; roller's trace.jsonl need not keep file order).
 */
export function claudeCodeCompactions(records: Iterable<Json>): ClaudeCodeCompaction[] {
  const out: ClaudeCodeCompaction[] = [];
  const boundaries = new Map<string, ClaudeCodeCompaction>();
  const parentOf = new Map<string, string>();
  const summaries: Json[] = [];
  for (const r of records) {
    if (r.isSidechain === true || typeof r.uuid !== 'string') continue;
    if (typeof r.parentUuid === 'string') parentOf.set(r.uuid, r.parentUuid);
    if (r.type === 'system' && r.subtype === 'compact_boundary') {
      const c: ClaudeCodeCompaction = { boundaryUuid: r.uuid, trigger: typeof r.compactMetadata?.trigger === 'string' ? r.compactMetadata.trigger : null, summaryUuid: null, summaryText: null };
      out.push(c);
      boundaries.set(r.uuid, c);
    } else if (r.type === 'user' && r.isCompactSummary === true) summaries.push(r);
  }
  for (const r of summaries) {
    let at: string | undefined = r.parentUuid;
    for (let hops = 0; at !== undefined && hops < 1000 && !boundaries.has(at); hops++) at = parentOf.get(at);
    const c = at === undefined ? undefined : boundaries.get(at);
    if (c && c.summaryUuid === null) {
      c.summaryUuid = r.uuid as string;
      c.summaryText = textOf(r.message?.content);
    }
  }
  return out;
}

/** Parses JSONL text into records, skipping lines that are not JSON objects (the raw checks report those). */
export function* jsonlRecords(text: string): Generator<Json> {
  for (const line of text.split('\n')) {
    if (!line.includes('"uuid"')) continue;
    try {
      const r = JSON.parse(line) as unknown;
      if (r && typeof r === 'object') yield r as Json;
    } catch {
      // a truncated line: not a record this reader can use
    }
  }
}

/**
 * The summary an Anthropic response wrote, as Claude Code copies it into its compact summary record: the
 * text inside <summary>…</summary> (Claude Code drops the <analysis> part and the tags), else the whole text.
 */
export function summaryOfOutput(call: Call): string | null {
  if (call.protocol !== 'anthropic-messages') return null;
  const text = textOf((call.output as Json | null)?.content).trim();
  const m = /<summary>([\s\S]*?)<\/summary>/.exec(text);
  const summary = (m ? m[1]! : text).trim();
  return summary === '' ? null : summary;
}

/**
 * The compaction summary calls of the main session: calls whose identity header names the root session
 * and whose output summary Claude Code recorded verbatim in a compact summary record. They have no native
 * message id (Claude Code writes the summary, not the response), so this is their only evidence; each
 * compaction is matched to at most one call, and an ambiguous match (two calls, one summary) matches none.
 */
export function compactionSummaryCalls(calls: readonly Call[], compactions: readonly ClaudeCodeCompaction[], rootSessionId: string): Map<string, ClaudeCodeCompaction> {
  const out = new Map<string, ClaudeCodeCompaction>();
  for (const compaction of compactions) {
    if (!compaction.summaryText) continue;
    const matches = calls.filter((c) => {
      if (c.native_identity.session_id !== rootSessionId || c.execution_status !== 'completed' || out.has(c.call_id)) return false;
      const summary = summaryOfOutput(c);
      return summary !== null && compaction.summaryText!.includes(summary);
    });
    if (matches.length === 1) out.set(matches[0]!.call_id, compaction);
  }
  return out;
}
