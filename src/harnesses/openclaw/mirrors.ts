/**
 * OpenClaw's CLI mirror replies (seeds/003 §5.3). OpenClaw sometimes records a reply it already delivered a
 * second time with `api: "cli"` — and genuine CLI-backend replies carry the same marker, so the marker alone
 * decides nothing. Tokens, requests and cost of a mirror are not counted again only when its usage matches
 * a provider call of the same turn and its source (provider/model) is that of the latest provider reply; its
 * message is left out only when its text is the delivered text. Everything else keeps content and usage.
 */

type Json = Record<string, any>;

export interface MirrorUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface AccountedMessage {
  /** The transcript entry (role assistant). */
  entry: Json;
  /** Kept in the conversation (ACTF): false only for a mirror repeating the delivered text. */
  kept: boolean;
  /** Counted as a model request with its own tokens. */
  counted: boolean;
  /** Cost credited for this message (only the part no earlier report covered). */
  costCredited: number;
  why: string;
}

export interface MirrorAccounting {
  messages: AccountedMessage[];
  tokens: MirrorUsage;
  requests: number;
  cost: number | null;
  /** Native counters that were present but not numbers (counted as 0, never replaced by an alias). */
  invalidCounters: string[];
}

interface Call {
  source: string;
  usage: MirrorUsage | null;
  cost: number | null;
  failed: boolean;
}

const FIELDS: [keyof MirrorUsage, string[]][] = [
  ['input', ['input', 'input_tokens']],
  ['output', ['output', 'output_tokens']],
  ['cacheRead', ['cacheRead', 'cache_read_input_tokens']],
  ['cacheWrite', ['cacheWrite', 'cache_creation_input_tokens']],
  ['total', ['totalTokens', 'total_tokens']],
];

/**
 * Usage of a message. The native field wins over its alias whenever it is present — even when it is not a
 * valid count — so an alias can never hide a broken native counter (the broken one counts 0 and is reported).
 */
export function usageOf(m: Json, invalid: string[], where: string): MirrorUsage | null {
  const u = m.usage as Json | undefined;
  if (!u || typeof u !== 'object') return null;
  const out: MirrorUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let any = false;
  for (const [key, names] of FIELDS) {
    const name = names.find((n) => n in u);
    if (name === undefined) continue;
    any = true;
    const v = u[name];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[key] = v;
    else invalid.push(`${where}: usage.${name} = ${JSON.stringify(v)}`);
  }
  if (!any) return null;
  if (!FIELDS[4]![1].some((n) => n in u)) out.total = out.input + out.output + out.cacheRead + out.cacheWrite;
  return out;
}

const costOf = (m: Json): number | null => {
  const c = m.usage?.cost?.total ?? m.cost;
  return typeof c === 'number' && Number.isFinite(c) && c >= 0 ? c : null;
};
const sourceOf = (m: Json) => `${String(m.provider ?? '')}/${String(m.model ?? '')}`;
const textOf = (m: Json): string =>
  typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? (m.content as Json[]).filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join('') : '';
const structured = (m: Json) => Array.isArray(m.content) && (m.content as Json[]).some((b) => b.type !== 'text');
const failedOf = (m: Json) => m.stopReason === 'error' || m.stopReason === 'aborted';
const same = (a: MirrorUsage, b: MirrorUsage) => a.input === b.input && a.output === b.output && a.cacheRead === b.cacheRead && a.cacheWrite === b.cacheWrite;

/** The accounting of a transcript's entries (active branch, in order). */
export function accountMirrors(entries: readonly Json[]): MirrorAccounting {
  const invalid: string[] = [];
  const messages: AccountedMessage[] = [];
  const tokens: MirrorUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let requests = 0;
  let cost = 0;
  let costSeen = false;
  // Turn history: provider calls since the last user / session / compaction event.
  let turn: Call[] = [];
  let delivered: { text: string; source: string } | null = null;
  let suspended = false;
  // Known cost per matched scope (the latest call, or the turn so far), so mirrors credit only what is missing.
  let knownCallCost = 0;
  let knownTurnCost = 0;

  const add = (u: MirrorUsage | null) => {
    if (!u) return;
    tokens.input += u.input;
    tokens.output += u.output;
    tokens.cacheRead += u.cacheRead;
    tokens.cacheWrite += u.cacheWrite;
    tokens.total += u.total;
  };
  const credit = (amount: number) => {
    cost += amount;
    costSeen = true;
    return amount;
  };

  entries.forEach((e, i) => {
    if (e.type === 'session' || e.type === 'compaction' || (e.type === 'message' && e.message?.role === 'user')) {
      turn = [];
      delivered = null;
      suspended = false;
      knownCallCost = 0;
      knownTurnCost = 0;
      return;
    }
    if (e.type !== 'message' || e.message?.role !== 'assistant') return;
    const m = e.message as Json;
    const where = `entry ${String(e.id ?? i)}`;
    const usage = usageOf(m, invalid, where);
    const c = costOf(m);
    const source = sourceOf(m);
    const keep = (why: string, credited: number) => {
      add(usage);
      requests++;
      messages.push({ entry: e, kept: true, counted: true, costCredited: credited, why });
    };

    if (m.api !== 'cli') {
      // A provider reply: always its own call.
      const credited = c === null ? 0 : credit(c);
      keep('provider reply', credited);
      turn.push({ source, usage, cost: c, failed: failedOf(m) });
      knownCallCost = c ?? 0;
      knownTurnCost += c ?? 0;
      if (!failedOf(m)) {
        delivered = { text: textOf(m), source };
        suspended = false;
      }
      return;
    }

    // api "cli": a mirror of a delivered reply, or a genuine CLI reply.
    const last = turn.at(-1);
    const independent =
      suspended || !delivered || !last || last.source !== source || delivered.source !== source || structured(m) || failedOf(m) || last.failed;
    if (independent) {
      // Independent, structured, failed, cross-source, or after a failed same-source call (a CLI fallback):
      // content and usage kept; delivery matching waits for the next provider reply; accounting history stays.
      keep(last?.failed ? 'CLI fallback after a failed provider call' : 'independent CLI reply', c === null ? 0 : credit(c));
      suspended = true;
      return;
    }
    const deliveredNow: { text: string; source: string } = delivered!;
    const cumulative = turn.reduce<MirrorUsage>(
      (a, t) => (t.usage ? { input: a.input + t.usage.input, output: a.output + t.usage.output, cacheRead: a.cacheRead + t.usage.cacheRead, cacheWrite: a.cacheWrite + t.usage.cacheWrite, total: a.total + t.usage.total } : a),
      { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    );
    const lastTotal = last.usage?.total ?? 0;
    const matchesCall = usage !== null && last.usage !== null && same(usage, last.usage) && usage.total === last.usage.total;
    // An aggregate: cumulative input/output/cache (failed calls of the turn included) with either the
    // cumulative total or the last call's positive total (context usage).
    const matchesTurn = usage !== null && same(usage, cumulative) && (usage.total === cumulative.total || (lastTotal > 0 && usage.total === lastTotal));
    const text = textOf(m);
    if (matchesCall || matchesTurn) {
      // The same call(s) again: no tokens, no request; cost only for what no earlier report covered, and
      // never a refund when reports disagree.
      let credited = 0;
      if (c !== null) {
        const known = matchesCall ? knownCallCost : knownTurnCost;
        if (c > known) credited = credit(c - known);
        if (matchesCall) knownCallCost = Math.max(knownCallCost, c);
        // What the turn is known to cost grows by whatever was credited, so a later turn total that covers
        // these calls adds nothing twice.
        knownTurnCost = matchesCall ? knownTurnCost + credited : Math.max(knownTurnCost, c);
      }
      const repeat = text === deliveredNow.text;
      messages.push({ entry: e, kept: !repeat, counted: false, costCredited: credited, why: repeat ? 'mirror of the delivered reply' : 'mirror filling a gap in the delivered text' });
      if (!repeat) delivered = { text, source };
      return;
    }
    if (usage === null && c !== null && text === deliveredNow.text) {
      // A cost-only mirror of the latest call.
      const credited = c > knownCallCost ? credit(c - knownCallCost) : 0;
      knownCallCost = Math.max(knownCallCost, c);
      knownTurnCost += credited;
      messages.push({ entry: e, kept: false, counted: false, costCredited: credited, why: 'cost-only mirror of the delivered reply' });
      return;
    }
    keep('CLI reply whose usage matches no call of the turn', c === null ? 0 : credit(c));
    suspended = true;
  });
  return { messages, tokens, requests, cost: costSeen ? cost : null, invalidCounters: invalid };
}
