import stringify from 'fast-json-stable-stringify';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';

/** Request input items (and rollout items) that load tools mid-conversation: tool_search's result, programmatic tools. */
const DYNAMIC_TOOL_ITEMS = new Set(['tool_search_output', 'additional_tools']);

type Json = Record<string, any>;

/**
 * Why a Codex trajectory cannot become linear SFT although its ACTF is fine (seeds/003 §4.2, §6.1): the
 * tool definitions changed between the root's requests, or tools were loaded dynamically (tool_search
 * output, programmatic additional_tools) — one static tools list would misstate what the model saw.
 * undefined when nothing blocks it (the shared projection still applies its own rules). Tools loaded dynamically are
 * found in the tools lists, in the root's requests' input items and in its rollout's items (`rootItemTypes`).
 */
export function codexSftBlocker(actf: Actf, rootCalls: readonly Call[] = [], rootItemTypes: readonly string[] = []): string | undefined {
  const snapshots = (actf.tools_capture ?? []) as Json[];
  if (snapshots.length > 1) {
    const first = stringify(snapshots[0]!.tools);
    const changed = snapshots.find((s) => stringify(s.tools) !== first);
    if (changed) return `tool definitions changed between requests (request seq ${snapshots[0]!.seq} vs ${changed.seq}); one static tools list would misstate them`;
  }
  const dynamic = snapshots.some((s) => (s.tools as Json[]).some((t) => t.type === 'additional_tools' || t.type === 'tool_search'));
  if (dynamic) return 'tools were loaded dynamically (tool_search / additional_tools); their load order cannot be kept in one static tools list';
  const loaded = rootCalls.find((c) => ((c.context as Json | null)?.input as Json[] | undefined)?.some?.((i) => DYNAMIC_TOOL_ITEMS.has(i?.type)));
  if (loaded) return `tools were loaded dynamically (request seq ${loaded.seq} carries a tool_search_output / additional_tools input item); one static tools list would misstate what the model saw`;
  const item = rootItemTypes.find((t) => DYNAMIC_TOOL_ITEMS.has(t));
  if (item) return `tools were loaded dynamically (the root rollout holds a ${item} item); one static tools list would misstate what the model saw`;
  return undefined;
}
