import { readFile } from 'node:fs/promises';

/** The session id a Claude Code run printed (its stream-json init / result events), for --resume. */
export async function sessionOfStdout(stdout: string): Promise<string | null> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  return /"session_id":"([^"]+)"/.exec(text)?.[1] ?? null;
}

/** The reply of one prompt as the user saw it: the last stream-json `result` event's text (null: none was printed). */
export async function replyOfStdout(stdout: string): Promise<string | null> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  let reply: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"type":"result"')) continue;
    try {
      const e = JSON.parse(line) as { type?: string; result?: unknown };
      if (e.type === 'result' && typeof e.result === 'string') reply = e.result;
    } catch {
      // a cut line: not a result
    }
  }
  return reply;
}

/**
 * What Claude Code itself reported (its stream-json `result` events, one per prompt): the main agent's usage,
 * and modelUsage over every agent — what roller's per-participant totals must add up to. `total_cost_usd`
 * and `modelUsage` are the session's running totals (a --resume restores them), `usage` the query alone:
 * each prompt's own figures are its result minus the previous one of the same session (seeds/004
 * "consecutive prompts"), never the running total counted twice.
 */
export async function claudeCodeResult(stdouts: readonly string[]): Promise<Record<string, unknown> | null> {
  const events: ClaudeResult[] = [];
  for (const path of stdouts) {
    const text = await readFile(path, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (!line.includes('"type":"result"')) continue;
      try {
        events.push(JSON.parse(line) as ClaudeResult);
      } catch {
        // a cut line: that prompt reported nothing readable
      }
    }
  }
  if (events.length === 0) return null;
  return reportedTotals(events);
}

export interface ClaudeResult {
  session_id?: string;
  usage?: Record<string, number>;
  modelUsage?: Record<string, Record<string, number>>;
  total_cost_usd?: number;
}

const TOKEN_KEYS = { input: 'inputTokens', cache_creation: 'cacheCreationInputTokens', cache_read: 'cacheReadInputTokens', output: 'outputTokens' } as const;
type Tokens = Record<keyof typeof TOKEN_KEYS, number>;

/** Every agent's tokens and the cost a result reports as the session's running totals. */
function runningTotals(r: ClaudeResult): { tokens: Tokens; cost: number } {
  const tokens: Tokens = { input: 0, cache_creation: 0, cache_read: 0, output: 0 };
  for (const m of Object.values(r.modelUsage ?? {})) for (const [k, field] of Object.entries(TOKEN_KEYS)) tokens[k as keyof Tokens] += m[field] ?? 0;
  return { tokens, cost: r.total_cost_usd ?? 0 };
}

/** Per prompt: its own figures (session delta when the counters continue the previous result's), and the sums. */
export function reportedTotals(events: ClaudeResult[]): Record<string, unknown> {
  const main: Tokens = { input: 0, cache_creation: 0, cache_read: 0, output: 0 };
  const all: Tokens = { input: 0, cache_creation: 0, cache_read: 0, output: 0 };
  let cost = 0;
  const prompts: Record<string, unknown>[] = [];
  let prev: { session: string | undefined; totals: ReturnType<typeof runningTotals> } | undefined;
  for (const r of events) {
    const now = runningTotals(r);
    const keys = Object.keys(now.tokens) as (keyof Tokens)[];
    // A delta only against the same session, and only when no counter went down (a restart reports afresh).
    const continues = prev !== undefined && prev.session !== undefined && prev.session === r.session_id && now.cost >= prev.totals.cost && keys.every((k) => now.tokens[k] >= prev!.totals.tokens[k]);
    const own: Tokens = { ...now.tokens };
    if (continues) for (const k of keys) own[k] -= prev!.totals.tokens[k];
    // Rounded to 1e-12 USD: a difference of two float sums must not print as 0.012244399999999999.
    const ownCost = Math.round((continues ? now.cost - prev!.totals.cost : now.cost) * 1e12) / 1e12;
    const u = r.usage ?? {};
    main.input += u.input_tokens ?? 0;
    main.cache_creation += u.cache_creation_input_tokens ?? 0;
    main.cache_read += u.cache_read_input_tokens ?? 0;
    main.output += u.output_tokens ?? 0;
    for (const k of keys) all[k] += own[k];
    cost += ownCost;
    prompts.push({ session_id: r.session_id ?? null, cost_basis: continues ? 'session_delta' : 'as_reported', cost_usd: ownCost, session_cumulative_cost_usd: now.cost, all_agents: own });
    prev = { session: r.session_id, totals: now };
  }
  return { source: 'stream-json result events', main_agent: main, all_agents: all, total_cost_usd: Math.round(cost * 1e12) / 1e12, prompts };
}
