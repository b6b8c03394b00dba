import stringify from 'fast-json-stable-stringify';
import type { Actf } from '../../schemas/actf.js';

type Json = Record<string, any>;

/**
 * Why a Codex trajectory cannot become linear SFT although its ACTF is fine (seeds/003 §4.2, §6.1): the
 * tool definitions changed between the root's requests, or tools were loaded dynamically (tool_search
 * output, programmatic additional_tools) — one static tools list would misstate what the model saw.
 * undefined when nothing blocks it (the shared projection still applies its own rules).
 */
export function codexSftBlocker(actf: Actf): string | undefined {
  const snapshots = (actf.tools_capture ?? []) as Json[];
  if (snapshots.length > 1) {
    const first = stringify(snapshots[0]!.tools);
    const changed = snapshots.find((s) => stringify(s.tools) !== first);
    if (changed) return `tool definitions changed between requests (request seq ${snapshots[0]!.seq} vs ${changed.seq}); one static tools list would misstate them`;
  }
  const dynamic = snapshots.some((s) => (s.tools as Json[]).some((t) => t.type === 'additional_tools' || t.type === 'tool_search'));
  if (dynamic) return 'tools were loaded dynamically (tool_search / additional_tools); their load order cannot be kept in one static tools list';
  return undefined;
}
