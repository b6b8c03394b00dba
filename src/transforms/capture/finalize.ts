import { copyFile, mkdir, rm } from '../../core/thread-fs.js';
import { basename, dirname, join, relative } from 'node:path';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { createStageContext } from '../../core/context.js';
import { sha256File } from '../../core/hashing.js';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { ParticipantUsage } from '../../harnesses/claude-code/participants.js';
import type { Call } from '../../schemas/call.js';
import { CAPTURE_SCHEMA, type Manifest } from '../../schemas/manifest.js';
import type { Relation } from '../../schemas/relation.js';
import { encodeCallLine } from '../../sinks/calls-jsonl/sink.js';
import { hasContext, withCallFields } from '../../schemas/call-context.js';
import { publishWireLog } from '../../sources/proxy/wire-publish.js';
import type { HeaderJoin, NativeCapture, NativeOutputs } from '../../harnesses/native-capture.js';
import { attributeCalls, withExportStatus } from './attribute.js';
import { checkCoverage, joinByHeader, joinRecordedOutputs, joinSole } from './coverage.js';
import { deriveRelations } from './relations.js';

export interface FinalizeCaptureOptions {
  /** capture/attempt-NNNN: created; its formal files are written here. */
  dir: string;
  calls: readonly Call[];
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
  /** What the native files say was output (default: per_id when capabilities say so, else none). */
  outputs?: NativeOutputs;
  /** Attribution by header value where response ids join nothing (count-coverage harnesses). */
  headerJoin?: HeaderJoin;
  /** Every call still unattributed belongs to this participant (see NativeCapture.soleParticipant). */
  soleParticipant?: { participant: string; evidence: string };
  /** Calls a native record holds the output of (see NativeCapture.recordedOutputs). */
  recordedOutputs?: Readonly<Record<string, { participant: string; evidence: string }>>;
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
    ...(native.headerJoin ? { headerJoin: native.headerJoin } : {}),
    ...(native.soleParticipant ? { soleParticipant: native.soleParticipant } : {}),
    ...(native.recordedOutputs ? { recordedOutputs: native.recordedOutputs } : {}),
    ...(native.agentPaths ? { agentPaths: native.agentPaths } : {}),
  });
}

/**
 * finalize_capture (seeds/000): attribute the calls, derive the relations, decide lifecycle and capture
 * status, write calls.jsonl, relations.jsonl and raw/ (per --capture-debug), then publish manifest.json with
 * the sha256 of every formal file — last, after everything it describes is closed.
 */
export async function finalizeCapture(o: FinalizeCaptureOptions): Promise<Manifest> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  let calls = attributeCalls(o.calls, o.participants);
  if (o.headerJoin) calls = joinByHeader(calls, o.headerJoin).map(withExportStatus);
  if (o.soleParticipant && o.participants.length === 1) calls = joinSole(calls, o.soleParticipant).map(withExportStatus);
  if (o.recordedOutputs) calls = joinRecordedOutputs(calls, o.recordedOutputs).map(withExportStatus);
  const outputs: NativeOutputs =
    o.outputs ?? (o.capabilities.native_output_coverage === 'per_id' ? { method: 'per_id' } : { method: 'none', reason: 'the adapter gave no native outputs to check against' });
  const coverage = checkCoverage(calls, o.participants, outputs);
  let relations = deriveRelations({ calls, participants: o.participants, scope: o.scope, ...(o.agentPaths ? { agentPaths: o.agentPaths } : {}) });

  const children = o.participants.filter((p) => p.role === 'child');
  const pending = children.filter((p) => p.status !== 'completed' && p.status !== 'failed').map((p) => p.participant);
  const undelivered = children.filter((p) => p.status === 'completed' && !relations.some((r) => r.type === 'result_delivered' && r.child_participant_id === p.participant));
  const lifecycle: Manifest['lifecycle'] = {
    status: pending.length > 0 ? 'pending' : undelivered.length > 0 || relations.some((r) => r.status === 'unknown') ? 'unknown' : 'complete',
    pending_participant_ids: pending,
  };
  const callsComplete = calls.every((c) => c.capture_status === 'complete' && c.identity_status === 'attributed');
  const captureStatus: Manifest['capture_status'] = lifecycle.status === 'complete' && callsComplete && coverage.status !== 'mismatch' ? 'complete' : 'partial';
  const failed = calls.some((c) => c.execution_status !== 'completed') || children.some((p) => p.status === 'failed');
  const keepRaw = o.debugRetention === 'full' || (o.debugRetention === 'on-error' && (captureStatus !== 'complete' || failed));

  // Integrity checks ran above (attribution, references); now cleanup: what is not kept is not referenced.
  if (!keepRaw) {
    calls = calls.map((c) => withCallFields(c, { response_path: null }));
    relations = relations.map((r) => ({ ...r, evidence: r.evidence.map((e) => (e.source === 'calls.jsonl' ? e : { ...e, retained: false })) }));
  } else {
    await mkdir(join(o.dir, 'raw', 'native'), { recursive: true });
    for (const f of o.nativeFiles ?? []) {
      const to = join(o.dir, nativeName(f, o.nativeRoot));
      await mkdir(dirname(to), { recursive: true });
      await copyFile(f, to);
    }
  }
  if (!keepRaw) await rm(join(o.dir, 'raw'), { recursive: true, force: true });

  const ctx = createStageContext();
  // The sinks hash what they write: those digests go into the manifest without reading the files again.
  const written = new Map<string, { sha256: string; bytes: number }>();
  for (const [name, report] of [
    ['calls.jsonl', await createJsonlSink({ path: join(o.dir, 'calls.jsonl') }).consume((async function* () { for (const c of calls) yield encodeCallLine(c); })(), ctx)],
    ['relations.jsonl', await createJsonlSink<Relation>({ path: join(o.dir, 'relations.jsonl') }).consume((async function* () { yield* relations; })(), ctx)],
  ] as const) {
    const f = report.files?.[join(o.dir, name)];
    if (f?.sha256) written.set(name, { sha256: f.sha256, bytes: f.bytes });
  }
  if (keepRaw && o.wireLog) {
    // After calls.jsonl: the published wire log refers to it for every request body it holds.
    const refs = new Set(calls.filter(hasContext).map((c) => c.call_id));
    await publishWireLog(o.wireLog, join(o.dir, 'raw', 'wire.frames'), refs);
  } else if (keepRaw && o.publishedWireLog) {
    await copyFile(o.publishedWireLog, join(o.dir, 'raw', 'wire.frames'));
  }

  const files: Manifest['files'] = {};
  const formal = ['calls.jsonl', 'relations.jsonl', ...(keepRaw ? ['raw/wire.frames', ...(o.nativeFiles ?? []).map((f) => nativeName(f, o.nativeRoot))] : [])];
  for (const f of formal) {
    if (f === 'raw/wire.frames' && !o.wireLog && !o.publishedWireLog) continue;
    files[f] = written.get(f) ?? (await sha256File(join(o.dir, f)));
  }
  const sum = (k: 'input' | 'cached_input' | 'cache_creation' | 'output' | 'reasoning') => calls.reduce((a, c) => a + (c.usage.normalized?.[k] ?? 0), 0);
  const manifest: Manifest = {
    schema: CAPTURE_SCHEMA,
    storage_layout: 'compact/v2',
    harness: o.harness,
    capture_scope: o.scope,
    attempt: o.attempt,
    created_at: o.createdAt ?? new Date().toISOString(),
    participants: o.participants.map((p) => ({
      participant_id: p.participant,
      role: p.role,
      native_ids: { native_id: p.native_id },
      parent_participant_id: p.parent,
      spawn_tool_call_id: p.spawn_tool_call_id,
      depth: p.depth,
      model: calls.find((c) => c.participant_id === p.participant)?.response_model ?? null,
      call_ids: calls.filter((c) => c.participant_id === p.participant).map((c) => c.call_id),
      status: p.status,
      status_source: p.status_source ?? p.reason,
    })),
    capabilities: o.capabilities,
    lifecycle,
    coverage,
    capture_status: captureStatus,
    debug_retention: o.debugRetention,
    raw_retained: keepRaw,
    totals: {
      input: sum('input'),
      cached_input: sum('cached_input'),
      cache_creation: sum('cache_creation'),
      output: sum('output'),
      reasoning: sum('reasoning'),
      cost_usd: o.participants.find((p) => p.role === 'root')?.cost_usd ?? null,
      requests: calls.length,
      calls: calls.length,
      relations: relations.length,
      unattributed_calls: calls.filter((c) => c.identity_status !== 'attributed').length,
    },
    files,
    errors: [],
  };
  await writeJsonAtomic(join(o.dir, 'manifest.json'), manifest);
  return manifest;
}

/** Where a native file is kept: raw/native/<path relative to the native root> (by file name without a root). */
function nativeName(file: string, root: string | undefined): string {
  const rel = root ? relative(root, file).split('\\').join('/') : basename(file);
  return `raw/native/${rel.startsWith('..') ? basename(file) : rel}`;
}
