import type { Call } from '../../schemas/call.js';
import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';

const KINDS = [
  ['input', 'input'],
  ['cache_read', 'cached_input'],
  ['cache_creation', 'cache_creation'],
  ['output', 'output'],
  ['reasoning', 'reasoning'],
] as const satisfies readonly (readonly [keyof TokensByKind, string])[];

/**
 * Where the native token counts disagree with what the server sent: each participant's tokens, kind by kind,
 * against the summed usage of the calls attributed to it; and every model call that no participant owns.
 * Empty: every token the server sent is counted once, in the participant that received it.
 */
export function tokenDisagreements(attributed: readonly Call[], participants: readonly ParticipantUsage[]): string[] {
  const problems: string[] = [];
  const model = attributed.filter((c) => (c.context as { generate?: unknown } | null)?.generate !== false && c.usage.normalized !== null);
  const orphans = model.filter((c) => c.participant_id === null || !participants.some((p) => p.participant === c.participant_id));
  if (orphans.length > 0) problems.push(`${orphans.length} model call(s) with usage belong to no participant (${orphans.map((c) => c.response_id ?? c.call_id).join(', ')})`);
  for (const p of participants) {
    const sent = Object.fromEntries(KINDS.map(([kind]) => [kind, 0])) as Record<keyof TokensByKind, number>;
    for (const c of model) {
      if (c.participant_id !== p.participant) continue;
      for (const [kind, wire] of KINDS) sent[kind] += c.usage.normalized![wire];
    }
    const off = KINDS.filter(([kind]) => !p.unknown_kinds?.includes(kind) && sent[kind] !== p.tokens[kind]).map(([kind]) => `${kind} ${p.tokens[kind]} native != ${sent[kind]} sent`);
    if (off.length > 0) problems.push(`${p.participant}: ${off.join(', ')}`);
  }
  return problems;
}

/** A call's usage as the server sent it, in a participant's token kinds. */
export const tokensOfCall = (c: Call): TokensByKind => Object.fromEntries(KINDS.map(([kind, wire]) => [kind, c.usage.normalized?.[wire] ?? 0])) as unknown as TokensByKind;

/** What the server sent for each response, by response id, in a participant's token kinds. */
export function wireUsageByResponse(calls: readonly Call[]): Map<string, TokensByKind> {
  const byId = new Map<string, TokensByKind>();
  for (const c of calls) if (c.response_id != null && c.usage.normalized !== null) byId.set(c.response_id, tokensOfCall(c));
  return byId;
}
