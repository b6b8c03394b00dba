import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readFile, writeFile } from '../../core/thread-fs.js';
import { harnessAdapter } from '../../harnesses/index.js';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { SftSubagentRecord } from '../../schemas/sft.js';
import { readCallsLazily } from '../../sources/archive/calls-reader.js';
import { wireProtocol } from '../../transforms/protocols/index.js';
import { projectSft } from '../../transforms/sft/project.js';
import { SAMPLE_FILE } from '../sample-layout.js';
import { delegationAudit, TOKEN_LIMIT } from './audits.js';

/** Why a sub-agent has a training record, or why not (info.json runtime.subagent_sft). */
export interface SubagentSftFinding {
  participant: string;
  status: 'ok' | 'unavailable';
  reason: string | null;
}

export interface SubagentSftInput {
  dir: string;
  /** The sample's path in the run (samples/<model>/<index>_<task>), the records' `subagent.sample`. */
  sample: string;
  task_id: string;
  index: number;
  harness: string;
  status: string;
  participants: readonly ParticipantUsage[];
  /** trace.jsonl, relative to dir (null when the harness wrote none). */
  raw: string | null;
  /** The published capture, relative to dir (null without --capture-calls). */
  capture: string | null;
  /** Calls no ACTF step holds: compaction summaries and auxiliary calls. */
  stepless: ReadonlySet<string>;
  keepThinking: boolean;
  /** A reason that excludes every record of the sample (a thinking or wire-effort mismatch concerns every request). */
  excludedBy: string | null;
}


/**
 * Each completed sub-agent (any depth) as its own linear SFT record (its system prompt, tools and messages, from the
 * harness's per-agent trajectories), in tree order: written to the sample's trace_SFT_subagents.jsonl when any is
 * eligible. A sub-agent is training data when the sample is ok, it completed and every agent it spawned finished, its
 * captured calls correspond one-to-one with its ACTF steps (so the record is what the model was given), its last step
 * did not stop at a token limit, and its trajectory projects losslessly; each finding says why not.
 */
export async function writeSubagentSft(o: SubagentSftInput): Promise<{ file: string | null; findings: SubagentSftFinding[] }> {
  const children = treeOrder(o.participants);
  if (children.length === 0) return { file: null, findings: [] };
  const all = (reason: string) => ({ file: null, findings: children.map((c) => ({ participant: c.participant, status: 'unavailable' as const, reason })) });
  if (o.status !== 'ok' && o.status !== 'skipped') return all(`the sample is ${o.status}`);
  if (o.excludedBy) return all(o.excludedBy);
  const adapter = harnessAdapter(o.harness);
  if (!adapter.atifSubagents) return all(`${o.harness} gives no per-agent trajectories`);
  if (!o.raw || !existsSync(join(o.dir, o.raw))) return all('no trace.jsonl to read the sub-agents from');
  if (!o.capture || !existsSync(join(o.dir, o.capture, 'calls.jsonl'))) return all('no captured calls to check its steps against (collect with --capture-calls)');
  const records = (await readFile(join(o.dir, o.raw), 'utf8')).split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  const trajectories = new Map(adapter.atifSubagents(records, o.participants).map((s) => [s.participant, s.actf]));
  const calls = new Map<string, number>();
  const firstRequest = new Map<string, Call>();
  for (const c of await readCallsLazily(join(o.dir, o.capture, 'calls.jsonl'))) {
    if (!c.participant_id || c.execution_status !== 'completed' || o.stepless.has(c.call_id)) continue;
    calls.set(c.participant_id, (calls.get(c.participant_id) ?? 0) + 1);
    if (!firstRequest.has(c.participant_id)) firstRequest.set(c.participant_id, c);
  }
  const lines: string[] = [];
  const findings: SubagentSftFinding[] = [];
  for (const child of children) {
    const why = unavailability(child, o, withRequestContext(trajectories.get(child.participant), firstRequest.get(child.participant)), calls.get(child.participant) ?? 0);
    if (typeof why === 'string') {
      findings.push({ participant: child.participant, status: 'unavailable', reason: why });
      continue;
    }
    lines.push(JSON.stringify(why));
    findings.push({ participant: child.participant, status: 'ok', reason: null });
  }
  if (lines.length === 0) return { file: null, findings };
  await writeFile(join(o.dir, SAMPLE_FILE.subagents), `${lines.join('\n')}\n`);
  return { file: SAMPLE_FILE.subagents, findings };
}

/** The child's record, or why it has none. */
function unavailability(child: ParticipantUsage, o: SubagentSftInput, actf: Actf | undefined, calls: number): SftSubagentRecord | string {
  if (child.status !== 'completed') return `it is ${child.status}`;
  const below = delegationAudit(descendants(o.participants, child.participant));
  if (below.status === 'unfinished') return `a sub-agent it spawned did not finish (${below.not_completed.find((c) => c.unfinished)!.participant})`;
  if (!child.parent || !child.spawn_tool_call_id || child.depth < 1) return 'the call that spawned it is not on record';
  if (!actf) return 'trace.jsonl holds no trajectory of it';
  const steps = actf.steps.reduce((n, s) => n + (s.metric?.llm_call_count ?? 1), 0);
  if (steps !== calls) return `its ${calls} captured calls do not correspond one-to-one with its ${steps} ACTF steps`;
  const last = actf.steps.at(-1)?.stop_reason;
  if (last && TOKEN_LIMIT.has(last)) return `its last step stopped at a token limit (${last})`;
  const sft = projectSft(actf, { keepThinking: o.keepThinking });
  if (sft.status !== 'ok') return sft.reason;
  return {
    ...sft.record,
    subagent: { sample: o.sample, task_id: o.task_id, index: o.index, participant_id: child.participant, parent_participant_id: child.parent, spawn_tool_call_id: child.spawn_tool_call_id, depth: child.depth },
  };
}

/**
 * A sub-agent's trajectory with what its first captured request gave the model where the harness's own records do
 * not say it (most keep no sub-agent system prompt or tool schemas): the system prompt and tools as sent.
 */
function withRequestContext(actf: Actf | undefined, first: Call | undefined): Actf | undefined {
  if (!actf || !first) return actf;
  const body = first.context as Record<string, unknown> | null;
  const protocol = wireProtocol(first.protocol);
  if (!body || typeof body !== 'object' || !protocol) return actf;
  const sent = protocol.systemAndTools(body);
  const out = { ...actf };
  if (actf.system_prompt === '' && sent.system !== '') Object.assign(out, { system_prompt: sent.system, system_prompt_source: 'wire' });
  if ((actf.tools === null || actf.tools_source === 'native_derived') && sent.tools.length > 0) Object.assign(out, { tools: sent.tools as Actf['tools'], tools_source: 'wire' });
  return out;
}

/** The sample's sub-agents, depth first from the root, siblings in the order the harness listed them. */
function treeOrder(participants: readonly ParticipantUsage[]): ParticipantUsage[] {
  const out: ParticipantUsage[] = [];
  const visit = (parent: string) => {
    for (const p of participants) {
      if (p.role === 'child' && p.parent === parent) {
        out.push(p);
        visit(p.participant);
      }
    }
  };
  for (const root of participants.filter((p) => p.role === 'root')) visit(root.participant);
  // Sub-agents whose parent is not on record come last, in the harness's order.
  for (const p of participants) if (p.role === 'child' && !out.includes(p)) out.push(p);
  return out;
}

/** The agents below one participant (its sub-agents and theirs), as children of one tree. */
function descendants(participants: readonly ParticipantUsage[], of: string): ParticipantUsage[] {
  const below = new Set([of]);
  const out: ParticipantUsage[] = [];
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of participants) {
      if (p.role === 'child' && p.parent && below.has(p.parent) && !below.has(p.participant)) {
        below.add(p.participant);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}
