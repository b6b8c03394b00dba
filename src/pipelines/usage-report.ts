import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SampleInfo } from '../schemas/run-info.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import { locate } from './locate.js';
import { openRun } from './run-reader.js';
import { addTokens, zeroTokens, type TokensByKind } from '../schemas/participant-usage.js';

type Tokens = TokensByKind;

export interface UsageNode {
  participant: string;
  role: 'root' | 'child';
  native_id: string;
  depth: number;
  spawn_tool_call_id: string | null;
  tokens: Tokens;
  messages: number;
  status: string;
  status_source: string | null;
  note: string | null;
  /** Calls this participant made that no native message holds (compaction summaries): their wire usage. */
  compaction?: { calls: number; tokens: Tokens };
  /** Other calls it made that no native message holds (OpenCode's title requests): their wire usage and why. */
  auxiliary?: { calls: number; rule: string; tokens: Tokens };
  children: UsageNode[];
}

export interface SampleUsage {
  path: string;
  task_id: string;
  model: string;
  status: string;
  tree: UsageNode[];
  /** Each participant's own tokens summed once (a child's tokens are never also the parent's). */
  totals: Tokens;
  cost_usd: number | null;
  /** Its calls priced from a maintained table (info.json usage.priced_cost_usd), and which of the two to use. */
  priced_cost_usd: number | null;
  cost_source: string;
  price_table: string | null;
  /** Against what the harness itself reported (Claude Code's result event), when it reported something. */
  reconciliation: { source: string; main_agent_agrees: boolean; all_agents_agree: boolean; differences: string[] } | null;
  /** With the server's token ids: prompts checked against their agent's previous call, continued, broken. */
  token_continuity?: { checked: number; continuous: number; breaks: number };
}

export interface UsageReport {
  run: string;
  samples: SampleUsage[];
  totals: Tokens;
  cost_usd: number | null;
  /** Every sample priced, summed (null when one was not). */
  priced_cost_usd: number | null;
}


/**
 * `roller usage RUN_DIR`: the agent tree of every sample (each participant's own tokens, depth, spawning tool
 * call, status and where it was read) and totals per sample and per run — every participant counted once,
 * from the samples' info.json (what collect recorded from the native files). Compaction summary calls, which
 * no native message holds, are shown beside their participant and counted in the totals once.
 */
export async function usageReport(dir: string): Promise<UsageReport> {
  // A run, or one of its samples (the report then holds that sample alone).
  const found = await locate(dir);
  if (found.kind === 'capture') throw new RollerError(ErrorCode.INVALID_OPTIONS, `${dir} is a capture attempt: roller usage takes a run or one of its samples (roller view-capture shows a capture's calls and tokens)`);
  const runDir = found.runDir;
  const opened = await openRun(runDir);
  const samples: SampleUsage[] = [];
  const totals = zeroTokens();
  let cost: number | null = null;
  let priced: number | null = 0;
  for await (const row of opened.rows()) {
    if (found.kind === 'sample' && join(runDir, row.path) !== found.sampleDir) continue;
    if (!existsSync(join(runDir, row.path, 'info.json'))) continue; // a sample not written yet (a run under way)
    const sample = await opened.sample(row);
    const info = sample.info;
    const people = sample.participants as unknown as (Omit<UsageNode, 'children' | 'note'> & { parent: string | null; reason?: string | null })[];
    const nodes = new Map(people.map((p) => [p.participant, { ...p, note: p.reason ?? null, children: [] as UsageNode[] }]));
    const tree: UsageNode[] = [];
    for (const p of people) {
      const node = nodes.get(p.participant)!;
      const parent = p.parent ? nodes.get(p.parent) : undefined;
      if (parent) parent.children.push(node);
      else tree.push(node);
    }
    const sampleTotals = zeroTokens();
    for (const p of people) addTokens(sampleTotals, p.tokens);
    // Calls no native message holds, each under its participant: compaction summaries and auxiliary calls (titles).
    const runtime = info.runtime as { compaction_calls?: unknown; auxiliary_calls?: unknown };
    const extraCalls = [
      ...((runtime.compaction_calls ?? []) as { participant: string; tokens: Tokens }[]).map((c) => ({ ...c, kind: 'compaction' as const, rule: undefined })),
      ...((runtime.auxiliary_calls ?? []) as { participant: string; rule: string; tokens: Tokens }[]).map((c) => ({ ...c, kind: 'auxiliary' as const })),
    ];
    for (const c of extraCalls) {
      const node = nodes.get(c.participant);
      if (node) {
        const slot = c.kind === 'compaction' ? (node.compaction ??= { calls: 0, tokens: zeroTokens() }) : (node.auxiliary ??= { calls: 0, rule: c.rule!, tokens: zeroTokens() });
        slot.calls++;
        addTokens(slot.tokens, c.tokens);
      }
      addTokens(sampleTotals, c.tokens);
    }
    addTokens(totals, sampleTotals);
    const c = info.usage?.cost_usd ?? null;
    if (c !== null) cost = (cost ?? 0) + c;
    const p = info.usage?.priced_cost_usd ?? null;
    priced = p === null || priced === null ? null : priced + p;
    const source = info.usage?.cost_source ?? (c !== null ? 'reported' : 'unknown');
    samples.push({ path: row.path, task_id: info.task_id, model: info.model, status: row.status, tree: tree.map(strip), totals: sampleTotals, cost_usd: c, priced_cost_usd: p, cost_source: source, price_table: info.usage?.price_table ?? null, reconciliation: reconcile(info, tree, sampleTotals), ...(info.runtime.capture?.token_continuity ? { token_continuity: info.runtime.capture.token_continuity } : {}) });
  }
  return { run: runDir, samples, totals, cost_usd: cost, priced_cost_usd: samples.length > 0 ? priced : null };
}

function strip(n: UsageNode & { parent?: unknown; reason?: unknown }): UsageNode {
  const { parent: _p, reason: _r, ...rest } = n;
  return { ...rest, children: n.children.map(strip) };
}

/** Token kinds as every report says them (usage, collect's progress): input apart from cache writes and reads. */
export const formatTokens = (t: Tokens) => `in ${t.input} · cache write ${t.cache_creation} · cache read ${t.cache_read} · out ${t.output}${t.reasoning ? ` (reasoning ${t.reasoning})` : ''}`;
const fmt = formatTokens;

/** Both costs where both exist: the one the harness reported and the one priced from the calls (with its table). */
function costs(reported: number | null | undefined, priced: number | null | undefined, table: string | null | undefined): string {
  if (table === 'none' && reported === 0 && priced === 0) return ' · no cost (the scripted model)';
  if (table === 'none' && reported === null && priced === 0) return '';
  const parts = [...(typeof reported === 'number' ? [`$${reported.toFixed(4)} reported`] : []), ...(typeof priced === 'number' ? [`$${priced.toFixed(4)} priced (${table ?? 'price table'})`] : [])];
  return parts.length ? ` · ${parts.join(' · ')}` : '';
}

/** The report as text: one tree per sample, then the run's totals. */
export function formatUsage(r: UsageReport): string[] {
  const lines: string[] = [];
  for (const s of r.samples) {
    lines.push(`${s.path} [${s.status}] ${fmt(s.totals)}${costs(s.cost_usd, s.priced_cost_usd, s.price_table)}`);
    if (s.token_continuity && s.token_continuity.checked > 0) {
      const t = s.token_continuity;
      lines.push(`  token ids: ${t.continuous} of ${t.checked} prompts continued their agent's previous call${t.breaks > 0 ? `; ${t.breaks} broke (the capture's manifest.json token_continuity says where and why)` : ''}`);
    }
    if (s.reconciliation) {
      lines.push(`  ${s.reconciliation.differences.length === 0 ? 'agrees with' : 'DIFFERS from'} the harness's own totals (${s.reconciliation.source})${s.reconciliation.differences.length ? `: ${s.reconciliation.differences.join('; ')}` : ''}`);
    }
    const walk = (n: UsageNode, indent: string) => {
      const priced = n as { priced_cost_usd?: number | null; price_table?: string };
      lines.push(`${indent}${n.role} ${n.native_id}${n.spawn_tool_call_id ? ` (spawned by ${n.spawn_tool_call_id})` : ''}: ${n.messages} messages, ${fmt(n.tokens)}${costs(null, priced.priced_cost_usd, priced.price_table)}, ${n.status}${n.status_source ? ` — ${n.status_source}` : ''}${n.note ? ` — ${n.note}` : ''}`);
      if (n.compaction) lines.push(`${indent}  + ${n.compaction.calls} compaction summary call(s) (wire usage; no native message): ${fmt(n.compaction.tokens)}`);
      if (n.auxiliary) lines.push(`${indent}  + ${n.auxiliary.calls} call(s) of ${n.auxiliary.rule} (wire usage): ${fmt(n.auxiliary.tokens)}`);
      for (const c of n.children) walk(c, `${indent}  `);
    };
    for (const n of s.tree) walk(n, '  ');
  }
  lines.push(`run ${r.run}: ${r.samples.length} samples, ${fmt(r.totals)}${costs(r.cost_usd, r.priced_cost_usd, r.samples.find((s) => s.price_table)?.price_table)}`);
  return lines;
}

const KINDS = ['input', 'cache_creation', 'cache_read', 'output'] as const;

/** Roller's per-participant tokens against the harness's own totals: the root alone, and every agent together. */
function reconcile(info: SampleInfo, tree: UsageNode[], totals: Tokens): SampleUsage['reconciliation'] {
  const reported = (info.runtime as { harness_reported?: { source: string; main_agent: Tokens; all_agents: Tokens } }).harness_reported;
  if (!reported) return null;
  const differences: string[] = [];
  const root = tree.find((n) => n.role === 'root');
  for (const k of KINDS) {
    if (root && root.tokens[k] !== reported.main_agent[k]) differences.push(`main agent ${k}: roller ${root.tokens[k]}, harness ${reported.main_agent[k]}`);
    if (totals[k] !== reported.all_agents[k]) differences.push(`all agents ${k}: roller ${totals[k]}, harness ${reported.all_agents[k]}`);
  }
  return {
    source: reported.source,
    main_agent_agrees: !differences.some((d) => d.startsWith('main')),
    all_agents_agree: !differences.some((d) => d.startsWith('all')),
    differences,
  };
}
