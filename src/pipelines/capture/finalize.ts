import { basename, dirname, join, relative } from 'node:path';
import { copyFile, mkdir, rm } from '../../core/thread-fs.js';
import { createStageContext } from '../../core/context.js';
import { runPipeline } from '../../core/run-pipeline.js';
import type { Call } from '../../schemas/call.js';
import { hasContext, withCallFields } from '../../schemas/call-context.js';
import { CAPTURE_SCHEMA, type Manifest } from '../../schemas/manifest.js';
import type { Announcements, NativeCapture, NativeOutputs } from '../../schemas/native-capture.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Relation } from '../../schemas/relation.js';
import { createCallsJsonlSink } from '../../sinks/calls-jsonl/sink.js';
import { TokenContinuity } from '../../transforms/capture/token-continuity.js';
import { createCaptureManifestSink } from '../../sinks/capture-manifest/sink.js';
import { createRelationsSink } from '../../sinks/relations/sink.js';
import { publishWireLog } from '../../sources/proxy/wire-publish.js';
import { CoverageCheck } from '../../transforms/capture/coverage.js';
import { callEvidence, evidenceWatch, type CallEvidence, type DeliveryRecogniser } from '../../transforms/capture/evidence.js';
import { auxiliaryOf, deliveryOf } from '../../harnesses/index.js';
import { relationsFromEvidence } from '../../transforms/capture/relations.js';
import { CallTally, captureOutcome } from '../../transforms/capture/statuses.js';
import { addTo } from '../../core/multimap.js';

/** A capture's calls: held (an array) or read again on demand (each call is looked at twice: decide, then write). */
export type CallSource = readonly Call[] | (() => AsyncIterable<Call>);

export interface FinalizeCaptureOptions {
  /** capture/attempt-NNNN: created; its formal files are written here. */
  dir: string;
  /** The attempt's calls, attributed (pipelines/attribution.ts: the one place calls are attributed). */
  calls: CallSource;
  participants: readonly ParticipantUsage[];
  harness: Manifest['harness'];
  capabilities: Manifest['capabilities'];
  attempt: number;
  scope: string;
  debugRetention: 'on-error' | 'full' | 'off';
  /**
   * The proxy's wire log (raw/wire.frames), kept under raw/ when retention says so — with body_refs into
   * calls.jsonl in place of the request bodies it holds.
   */
  wireLog?: string;
  /** Native files kept under raw/native/ when retention says so. */
  nativeFiles?: readonly string[];
  /** The directory nativeFiles are kept relative to (the converter's native root); else by file name. */
  nativeRoot?: string;
  /** A wire log already in published form (body_refs into calls.jsonl: a reprocessed archive): kept as it is. */
  publishedWireLog?: string;
  /** manifest created_at; default now. A reprocess keeps the original's (its own time is recorded apart). */
  createdAt?: string;
  agentPaths?: Readonly<Record<string, string>>;
  /** OpenClaw: deliveries bound to announcement runs (NativeCapture.announcements). */
  announcements?: Announcements;
  /** What the native files say was output (default: per_id when capabilities say so, else none). */
  outputs?: NativeOutputs;
  /** The harness's delivery evidence (HarnessAdapter.delivery; finalizeNativeCapture takes the registered one's). */
  delivery?: DeliveryRecogniser;
  /** Calls an agent made besides its conversation (title requests): outside its token-continuity chain. */
  auxiliary?: (call: Call) => boolean;
}

/** finalizeCapture from an adapter's NativeCapture. */
export function finalizeNativeCapture(
  native: NativeCapture,
  o: Pick<FinalizeCaptureOptions, 'dir' | 'calls' | 'attempt' | 'scope' | 'debugRetention' | 'wireLog' | 'publishedWireLog' | 'createdAt' | 'nativeRoot'>,
): Promise<Manifest> {
  return finalizeCapture({
    ...o,
    participants: native.participants,
    harness: native.harness,
    capabilities: native.capabilities,
    outputs: native.outputs,
    nativeFiles: native.nativeFiles,
    ...(native.agentPaths ? { agentPaths: native.agentPaths } : {}),
    ...(native.announcements ? { announcements: native.announcements } : {}),
    ...deliveryOf(native.harness.name),
    ...auxiliaryOf(native.harness.name),
  });
}

async function* each(source: CallSource): AsyncIterable<Call> {
  if (typeof source === 'function') yield* source();
  else yield* source;
}

/**
 * finalize_capture (seeds/000), as stages, over calls already attributed: each call's evidence is taken (relations,
 * coverage, statuses hold ids, never the calls); then relations, lifecycle, capture status and retention are decided;
 * then the calls are written to calls.jsonl, relations.jsonl and raw/, and the manifest is published last with the
 * sha256 of every formal file.
 */
export async function finalizeCapture(o: FinalizeCaptureOptions): Promise<Manifest> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const seen = await observeCalls(o);
  let relations = relationsFromEvidence(seen.evidence, o.participants, o.scope, o.announcements);
  const { lifecycle, captureStatus, keepRaw } = captureOutcome({ participants: o.participants, relations, tally: seen.tally, coverage: seen.coverage, retention: o.debugRetention });

  // Integrity was decided above (attribution, references); now retention: what is not kept is not referenced.
  if (!keepRaw) {
    relations = relations.map((r) => ({ ...r, evidence: r.evidence.map((e) => (e.source === 'calls.jsonl' ? e : { ...e, retained: false })) }));
    await rm(join(o.dir, 'raw'), { recursive: true, force: true });
  } else {
    await mkdir(join(o.dir, 'raw', 'native'), { recursive: true });
    for (const f of o.nativeFiles ?? []) {
      const to = join(o.dir, nativeName(f, o.nativeRoot));
      await mkdir(dirname(to), { recursive: true });
      await copyFile(f, to);
    }
  }
  const digests = await writeFormalFiles(o, relations, keepRaw, seen.withContext, seen.continuity);
  const tokens = seen.continuity.finish();
  const wire = keepRaw && (o.wireLog !== undefined || o.publishedWireLog !== undefined);
  const formal = ['calls.jsonl', 'relations.jsonl', ...(keepRaw ? [...(wire ? ['raw/wire.frames'] : []), ...(o.nativeFiles ?? []).map((f) => nativeName(f, o.nativeRoot))] : [])];
  const manifest: Manifest = {
    schema: CAPTURE_SCHEMA,
    storage_layout: 'compact/v2',
    harness: o.harness,
    capture_scope: o.scope,
    attempt: o.attempt,
    created_at: o.createdAt ?? new Date().toISOString(),
    participants: manifestParticipants(o, seen),
    capabilities: o.capabilities,
    lifecycle,
    coverage: seen.coverage,
    capture_status: captureStatus,
    debug_retention: o.debugRetention,
    raw_retained: keepRaw,
    totals: {
      ...seen.totals,
      cost_usd: o.participants.find((p) => p.role === 'root')?.cost_usd ?? null,
      requests: seen.calls,
      calls: seen.calls,
      relations: relations.length,
      unattributed_calls: seen.unattributed,
    },
    ...(tokens.calls_with_ids > 0 ? { token_continuity: tokens } : {}),
    files: {},
    errors: [],
  };
  const files = formal.map((path) => ({ path, ...(digests.has(path) ? { digest: digests.get(path)! } : {}) }));
  await createCaptureManifestSink({ dir: o.dir }).consume(fromArray([{ manifest, files }]), createStageContext());
  return manifest;
}

/** What one pass over the attributed calls finds: their evidence (ids, never the calls), coverage, tally and totals. */
async function observeCalls(o: FinalizeCaptureOptions) {
  const watch = evidenceWatch(o.participants, o.agentPaths, o.delivery);
  const outputs: NativeOutputs =
    o.outputs ?? (o.capabilities.native_output_coverage === 'per_id' ? { method: 'per_id' } : { method: 'none', reason: 'the adapter gave no native outputs to check against' });
  const coverageCheck = new CoverageCheck(outputs);
  const tally = new CallTally();
  const evidence: CallEvidence[] = [];
  /** Calls whose request body the published wire log refers to in calls.jsonl. */
  const withContext = new Set<string>();
  const totals = { input: 0, cached_input: 0, cache_creation: 0, output: 0, reasoning: 0 };
  let calls = 0;
  let unattributed = 0;
  const callIdsOf = new Map<string, string[]>();
  const modelOf = new Map<string, string | null>();
  const continuity = new TokenContinuity();
  for await (const c of each(o.calls)) {
    evidence.push(callEvidence(c, watch));
    if (!o.auxiliary?.(c)) continuity.observe(c);
    coverageCheck.observe(c);
    tally.observe(c);
    if (hasContext(c)) withContext.add(c.call_id);
    calls++;
    for (const k of ['input', 'cached_input', 'cache_creation', 'output', 'reasoning'] as const) totals[k] += c.usage.normalized?.[k] ?? 0;
    if (c.identity_status !== 'attributed') unattributed++;
    if (c.participant_id !== null) {
      addTo(callIdsOf, c.participant_id, c.call_id);
      if (!modelOf.has(c.participant_id)) modelOf.set(c.participant_id, c.response_model);
    }
  }
  return { evidence, coverage: coverageCheck.result(o.participants), tally, withContext, totals, calls, unattributed, callIdsOf, modelOf, continuity };
}

/** calls.jsonl, relations.jsonl and the wire log under raw/; the digests the sinks took as they wrote (for the manifest). */
async function writeFormalFiles(o: FinalizeCaptureOptions, relations: Relation[], keepRaw: boolean, withContext: ReadonlySet<string>, continuity: TokenContinuity): Promise<Map<string, { sha256: string; bytes: number }>> {
  const digests = new Map<string, { sha256: string; bytes: number }>();
  const keep = (report: { files?: Readonly<Record<string, { sha256?: string; bytes: number }>> }, name: string) => {
    const f = report.files?.[join(o.dir, name)];
    if (f?.sha256) digests.set(name, { sha256: f.sha256, bytes: f.bytes });
  };
  // The sinks hash what they write: those digests go into the manifest without reading the files again.
  const written = await runPipeline({
    name: 'capture-calls',
    source: () =>
      (async function* () {
        // Prompt ids as the prefix shared with the agent's previous call plus the rest: linear, not quadratic.
        for await (const c of each(o.calls)) yield continuity.compressed(keepRaw ? c : withCallFields(c, { response_path: null }));
      })(),
    sinks: [createCallsJsonlSink({ path: join(o.dir, 'calls.jsonl') })],
  });
  keep(written.sinks[0]!, 'calls.jsonl');
  keep(await createRelationsSink({ path: join(o.dir, 'relations.jsonl') }).consume(fromArray(relations), createStageContext()), 'relations.jsonl');
  // After calls.jsonl: the published wire log refers to it for every request body it holds.
  if (keepRaw && o.wireLog) await publishWireLog(o.wireLog, join(o.dir, 'raw', 'wire.frames'), withContext);
  else if (keepRaw && o.publishedWireLog) await copyFile(o.publishedWireLog, join(o.dir, 'raw', 'wire.frames'));
  return digests;
}

/** The manifest's participants: each with its calls and the model that answered its first one. */
function manifestParticipants(o: FinalizeCaptureOptions, seen: { callIdsOf: Map<string, string[]>; modelOf: Map<string, string | null> }): Manifest['participants'] {
  return o.participants.map((p) => ({
    participant_id: p.participant,
    role: p.role,
    native_ids: { native_id: p.native_id, ...(o.agentPaths?.[p.native_id] ? { agent_path: o.agentPaths[p.native_id]! } : {}) },
    parent_participant_id: p.parent,
    spawn_tool_call_id: p.spawn_tool_call_id,
    depth: p.depth,
    model: seen.modelOf.get(p.participant) ?? null,
    call_ids: seen.callIdsOf.get(p.participant) ?? [],
    status: p.status,
    status_source: p.status_source,
    reason: p.reason,
    spawn_result: p.spawn_result ?? null,
    ...(p.resumed_by?.length ? { resumed_by: p.resumed_by, ...(p.spawn_status ? { spawn_status: p.spawn_status } : {}) } : {}),
  }));
}

async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

/** Where a native file is kept: raw/native/<path relative to the native root> (by file name without a root). */
function nativeName(file: string, root: string | undefined): string {
  const rel = root ? relative(root, file).split('\\').join('/') : basename(file);
  return `raw/native/${rel.startsWith('..') ? basename(file) : rel}`;
}

export type { Relation };
