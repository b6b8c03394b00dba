import { existsSync } from 'node:fs';
import { rm } from '../../core/thread-fs.js';
import { join } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { itemsOf } from '../../core/document-sink.js';
import { createSampleInfoSink } from '../../sinks/sample-info/sink.js';
import { sampleLocation } from '../../sinks/sample-location.js';
import { partialUsage, type ParticipantUsage } from '../../schemas/participant-usage.js';
import { costSource, isScriptedModel, PRICE_TABLE, type SummedPrice } from '../../transforms/cost/price-table.js';
import { participantPrice, samplePrices, type SamplePrices } from '../sample-prices.js';
import { harnessAdapter } from '../../harnesses/index.js';
import { SAMPLE_INFO_SCHEMA, type SampleInfo } from '../../schemas/run-info.js';
import type { AttemptResult } from './sample.js';
import { delegationAudit, type DelegationAudit } from './audits.js';
import { writeSubagentSft } from './subagent-sft.js';
import type { UserSimulatorInfo } from '../../schemas/dialogue.js';
import { SAMPLE_FILE } from '../sample-layout.js';

/** What a sample's info.json says that its evidence does not derive: who it is and how its attempts went. */
export interface SampleHead {
  task_id: string;
  index: number;
  model: string;
  harness: { name: string; version: string };
  attempts: SampleInfo['attempts'];
  elapsed_ms: number;
  provenance: SampleInfo['provenance'];
}

/**
 * The sample's last step, shared by collect and reprocess: a failed sample loses its SFT (keeping raw and
 * ACTF), an ok one its rollout logs; then info.json from the final attempt's projection.
 */
export async function finishSample(dir: string, head: SampleHead, result: Pick<AttemptResult, 'status' | 'error' | 'participants' | 'requests' | 'conversion' | 'results' | 'capture' | 'audits' | 'segments' | 'compactionCalls' | 'auxiliaryCalls' | 'harnessReported' | 'spawnsWithoutParticipant' | 'userSimulator' | 'grade'> & { warnings?: string[]; captureFailures?: AttemptResult['captureFailures']; keepThinking?: boolean }): Promise<SampleInfo> {
  await rm(join(dir, SAMPLE_FILE.subagents), { force: true });
  if (result.status !== 'ok') {
    await rm(join(dir, SAMPLE_FILE.sft), { force: true });
    await rm(join(dir, SAMPLE_FILE.segments), { recursive: true, force: true });
  } else {
    await rm(join(dir, SAMPLE_FILE.rollout), { recursive: true, force: true });
  }
  const completion = result.audits?.completion;
  const sftOk = result.status === 'ok' && existsSync(join(dir, SAMPLE_FILE.sft));
  const conversion = (result.conversion?.trajectory_conversion as SampleInfo['runtime']['trajectory_conversion'] | undefined) ?? [
    { target: 'actf', status: 'unavailable', reason: result.error?.message ?? 'the harness wrote no native session' },
    { target: 'sft', status: 'unavailable', reason: result.error?.message ?? 'the harness wrote no native session' },
  ];
  const prices = await samplePrices(dir, result.capture?.path);
  const scripted = isScriptedModel(head.model);
  const usage = sampleUsage(result, prices, scripted);
  const delegation = delegationAudit(result.participants);
  const eligibility = sftEligibility(result, sftOk, conversion, delegation);
  const subagents = await subagentRecords(dir, head, result, eligibility);
  const info: SampleInfo = {
    schema: SAMPLE_INFO_SCHEMA,
    task_id: head.task_id,
    index: head.index,
    model: head.model,
    harness: head.harness,
    status: result.status,
    error: result.error,
    attempts: head.attempts,
    elapsed_ms: head.elapsed_ms,
    usage,
    trajectory: {
      raw_schema: existsSync(join(dir, SAMPLE_FILE.raw)) ? harnessAdapter(head.harness.name).rawSchema : null,
      raw: existsSync(join(dir, SAMPLE_FILE.raw)) ? SAMPLE_FILE.raw : null,
      actf: existsSync(join(dir, SAMPLE_FILE.actf)) ? SAMPLE_FILE.actf : null,
      sft: sftOk ? SAMPLE_FILE.sft : null,
      ...(subagents.file ? { sft_subagents: subagents.file } : {}),
      ...(result.status === 'ok' && result.segments ? { sft_segments: result.segments } : {}),
    },
    results: result.results,
    ...(result.grade ? { grade: result.grade } : {}),
    runtime: {
      trajectory_conversion: conversion,
      sft_eligibility: eligibility,
      delegation_audit: delegation,
      ...(subagents.findings.length > 0 ? { subagent_sft: subagents.findings } : {}),
      completion_audit: completion ? { status: completion.status, reason: completion.reason, source: completion.source, actf_stop_reason: completion.actf_stop_reason } : null,
      // seeds/003: where the final response overrode the ACTF's finding, the ACTF's is kept too.
      ...(completion?.actf_finding ? { actf_completion_audit: { ...completion.actf_finding, source: 'actf', actf_stop_reason: completion.actf_stop_reason } } : {}),
      model_identity_audit: result.audits?.modelIdentity ?? null,
      ...(result.audits?.wireEffort ? { wire_effort_audit: result.audits.wireEffort } : {}),
      ...(result.audits?.thinking ? { thinking_audit: result.audits.thinking } : {}),
      participants: result.participants.map((p) => ({ participant: p.participant, role: p.role, native_id: p.native_id, parent: p.parent, depth: p.depth, spawn_tool_call_id: p.spawn_tool_call_id, messages: p.messages, tokens: p.tokens, ...participantCost(p, participantPrice(p.participant, prices), scripted), status: p.status, status_source: p.status_source, ...(p.status_meaning ? { status_meaning: p.status_meaning } : {}), ...(p.replayed_records_skipped !== undefined ? { replayed_records_skipped: p.replayed_records_skipped } : {}), ...(p.resumed_by?.length ? { resumed_by: p.resumed_by, spawn_status: p.spawn_status } : {}), reason: p.reason })),
      capture: result.capture,
      ...(result.compactionCalls?.length ? { compaction_calls: result.compactionCalls } : {}),
      ...(result.auxiliaryCalls?.length ? { auxiliary_calls: result.auxiliaryCalls } : {}),
      ...(result.spawnsWithoutParticipant?.length ? { spawns_without_participant: result.spawnsWithoutParticipant } : {}),
      ...(result.harnessReported ? { harness_reported: result.harnessReported } : {}),
      ...(result.warnings?.length ? { warnings: result.warnings } : {}),
      ...(Array.isArray(result.conversion?.read_notes) ? { read_notes: result.conversion.read_notes } : {}),
      ...(result.captureFailures?.length ? { capture_errors: result.captureFailures } : {}),
      ...(result.userSimulator ? dialogueRuntime(result.userSimulator, usage) : {}),
    },
    provenance: head.provenance,
  };
  await createSampleInfoSink({ path: join(dir, SAMPLE_FILE.info) }).consume(itemsOf(info), createStageContext());
  return info;
}

type FinishedResult = Parameters<typeof finishSample>[2];

/** The sample's sub-agents as training records (subagent-sft.ts); the run-wide exclusions (thinking, wire effort) apply to all. */
function subagentRecords(dir: string, head: SampleHead, result: FinishedResult, eligibility: SampleInfo['runtime']['sft_eligibility']) {
  const wholeSample = eligibility?.reason && /^(thinking_effort_mismatch|wire_effort_mismatch)/.test(eligibility.reason) ? eligibility.reason : null;
  return writeSubagentSft({
    dir,
    sample: samplePath(dir),
    task_id: head.task_id,
    index: head.index,
    harness: head.harness.name,
    status: result.status,
    participants: result.participants,
    raw: existsSync(join(dir, SAMPLE_FILE.raw)) ? SAMPLE_FILE.raw : null,
    capture: result.capture?.path ?? null,
    stepless: new Set([...(result.compactionCalls ?? []), ...(result.auxiliaryCalls ?? [])].map((c) => c.call_id)),
    keepThinking: result.keepThinking ?? true,
    excludedBy: wholeSample,
  });
}

/** The sample's tokens: its participants' and the calls no native record holds (compaction summaries, auxiliary calls). */
function sampleUsage(result: FinishedResult, prices: SamplePrices, scripted: boolean): SampleInfo['usage'] {
  if (result.participants.length === 0) return null;
  const calls = [...(result.compactionCalls ?? []), ...(result.auxiliaryCalls ?? [])];
  const sum = (k: keyof ParticipantUsage['tokens']) => result.participants.reduce((a, p) => a + p.tokens[k], 0) + calls.reduce((a, c) => a + c.tokens[k], 0);
  const partial = partialUsage(result.participants);
  return {
    input: sum('input'),
    cached_input: sum('cache_read'),
    cache_creation: sum('cache_creation'),
    output: sum('output'),
    reasoning: sum('reasoning'),
    ...participantCost({ cost_usd: result.participants.find((p) => p.role === 'root')?.cost_usd ?? null }, prices.sample, scripted),
    requests: result.requests,
    ...(partial ? { partial } : {}),
  };
}

/**
 * The embedded scripted model is no real model: its answers cost nothing, whatever model name the harness priced them
 * as (the harness's own figure stays in runtime.harness_reported).
 */
const SCRIPTED_COST = { cost_usd: 0, priced_cost_usd: 0, cost_source: 'scripted', price_table: 'none', priced_cost_note: 'the embedded scripted model answered: no real model, no cost' } as const;

/** The cost a harness reported and the one priced from the calls (with the table, or why not), and which to use. */
function participantCost(p: { cost_usd: number | null }, priced: SummedPrice, scripted = false) {
  if (scripted) return SCRIPTED_COST;
  return { cost_usd: p.cost_usd, priced_cost_usd: priced.usd, cost_source: costSource(p.cost_usd, priced.usd), price_table: PRICE_TABLE, ...(priced.reason ? { priced_cost_note: priced.reason } : {}) };
}

/** Whether the sample's SFT is training data, and the first reason it is not (a failure, then the audits in order). */
function sftEligibility(result: FinishedResult, sftOk: boolean, conversion: SampleInfo['runtime']['trajectory_conversion'], delegation: DelegationAudit): SampleInfo['runtime']['sft_eligibility'] {
  if (!sftOk) return { eligible: false, reason: result.status !== 'ok' ? `sample ${result.status}` : (conversion.find((c) => c.target === 'sft')?.reason ?? 'no SFT') };
  if (result.audits?.thinking?.status === 'mismatch') return { eligible: false, reason: 'thinking_effort_mismatch' };
  if (result.audits?.completion.status === 'flagged') return { eligible: false, reason: `incomplete_trajectory: ${result.audits.completion.reason}` };
  if (result.audits?.wireEffort?.status === 'mismatch') return { eligible: false, reason: `wire_effort_mismatch: requests asked for ${[...new Set(result.audits.wireEffort.observed)].join(', ')}, not ${result.audits.wireEffort.requested}` };
  const unfinished = delegation.not_completed.find((c) => c.unfinished);
  if (unfinished) return { eligible: false, reason: `incomplete_delegation: sub-agent ${unfinished.participant} is ${unfinished.status}${unfinished.status_source ? ` (${unfinished.status_source})` : ''}: the answer was not built on its result` };
  return { eligible: true, reason: null };
}

/**
 * A dialogue sample's two participants (seeds/003 §2.3): `usage` stays the Task Agent's (what sft.jsonl and the
 * run's training summary count); runtime.user_simulator indexes the simulator and total_usage adds both.
 */
function dialogueRuntime(sim: UserSimulatorInfo, agent: SampleInfo['usage']): Record<string, unknown> {
  const keys = ['input', 'cached_input', 'cache_creation', 'output', 'reasoning', 'requests'] as const;
  return {
    user_simulator: { path: 'user_simulator/info.json', model: sim.model, status: sim.status, error: sim.error, termination: sim.termination, usage: sim.usage },
    total_usage: {
      ...Object.fromEntries(keys.map((k) => [k, (agent?.[k] ?? 0) + sim.usage[k]])),
      ...(agent === null || agent.partial || sim.usage.partial ? { partial: { reason: agent === null ? 'the Task Agent has no usage' : 'a participant\'s usage is partial' } } : {}),
    },
  };
}

/** A sample directory's path in its run (reprocess builds it as `<dir>.partial`). */
const samplePath = (dir: string): string => sampleLocation(dir.replace(/\.partial$/, '')).sample;
