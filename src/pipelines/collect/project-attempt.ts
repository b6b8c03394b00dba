import { existsSync } from 'node:fs';
import { ErrorCode, isRollerError, RollerError } from '../../core/errors.js';
import { join } from 'node:path';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import type { Call } from '../../schemas/call.js';
import { harnessAdapter } from '../../harnesses/index.js';
import { nativeArchive } from '../../harnesses/native-archive.js';
import type { Actf } from '../../schemas/actf.js';
import type { SampleCaptureRef, SampleInfo } from '../../schemas/run-info.js';
import { attributionOf } from '../attribution.js';
import { finalizeNativeCapture } from '../capture/finalize.js';
import type { SegmentMeta } from '../../transforms/sft/segments.js';
import { convertNative } from '../convert.js';
import { readCallsLazily } from '../../sources/archive/calls-reader.js';
import { generatesOutput } from '../../schemas/call-context.js';
import { completionAudit, modelIdentityAudit, thinkingAudit, wireEffortAudit, type CompletionAudit, type ModelIdentityAudit, type ThinkingAudit, type WireEffortAudit } from './audits.js';
import { compactionCallUsage, tokensOfCall, writeCompactionSegments, type AuxiliaryCallUsage, type CompactionCallUsage } from './compaction-segments.js';
import type { ReadArena } from '../../core/read-arena.js';
import type { SpawnWithoutParticipant } from '../../schemas/participant-usage.js';

/**
 * Where one attempt's evidence is. Live (collect) and offline (reprocess) differ only here: collect points
 * at the harness's fresh HOME and the proxy's working files, reprocess at a capture's archived raw/.
 */
export interface AttemptSources {
  /** A harness the registry knows, with a capture contract (NativeCapture). */
  harness: string;
  harnessVersion: string;
  /** The directory the converter reads (`roller convert --native`): native paths are relative to it. */
  nativeRoot: string;
  /** The calls: as the proxy projected them (live) or as a capture published them (reprocess). */
  callsPath: string | null;
  /** Those calls already read (collect reads them once after the run), or the error reading them gave. */
  calls?: readonly Call[] | Error;
  /** The wire log: the proxy's working log (bodies inline) or an archived, already published one. */
  wireLog: { path: string; published: boolean } | null;
  /** The capture attempt's random scope (call and relation ids). */
  scope: string;
  attempt: number;
  /** The capture's created_at: a reprocess keeps the original's. */
  createdAt?: string;
  /** Where calls.jsonl is read into (a reprocess worker's, reused sample after sample). */
  readArena?: ReadArena;
}

export interface AttemptProjectionOptions {
  keepThinking: boolean;
  captureCalls: boolean;
  /** The retention this attempt's capture gets (collect widens on-error to full for a failed sample). */
  debugRetention: 'on-error' | 'full' | 'off';
  thinking: string | null;
  /** A non-default harness profile (lock.json harness_profile). */
  profile: string | null;
}

export interface AttemptProjection {
  participants: ParticipantUsage[];
  requests: number;
  conversion: Record<string, unknown> | null;
  capture: SampleCaptureRef | null;
  audits: { completion: CompletionAudit; modelIdentity: ModelIdentityAudit; wireEffort: WireEffortAudit | null; thinking: ThinkingAudit | null } | null;
  segments?: SegmentMeta[];
  compactionCalls?: CompactionCallUsage[];
  auxiliaryCalls?: AuxiliaryCallUsage[];
  /** Spawn calls that produced no participant (seeds/004): refused, failed, or their child not read. */
  spawnsWithoutParticipant?: SpawnWithoutParticipant[];
  /** What went wrong, as the sample's error (the first one counts). */
  errors: { code: string; message: string }[];
}


/**
 * Everything a sample's outputs derive from its evidence: the native session converted (trace.jsonl,
 * trace_ACTF.json, trace_SFT.json or compaction segments), the capture finalized (calls attributed, coverage,
 * relations, manifest, raw/ per retention — the native files at their relative paths), and the audits. The
 * same code for `roller collect` and `roller reprocess`.
 */
export async function projectAttempt(dir: string, src: AttemptSources, o: AttemptProjectionOptions): Promise<AttemptProjection> {
  const out: AttemptProjection = { participants: [], requests: 0, conversion: null, capture: null, audits: null, errors: [] };
  const fail = (code: string, message: string) => out.errors.push({ code, message });
  // Contexts stay bytes until a stage reads one: most are copied into the capture unparsed.
  if (src.calls instanceof Error) throw src.calls;
  const calls = src.calls ?? (src.callsPath && existsSync(src.callsPath) ? await readCallsLazily(src.callsPath, src.readArena ? { arena: src.readArena } : {}) : []);
  out.requests = calls.length;
  const sessions = await convertNative({
    harness: src.harness,
    native: src.nativeRoot,
    out: dir,
    keepThinking: o.keepThinking,
    sampleLayout: true,
    ...(src.callsPath && existsSync(src.callsPath) ? { wire: src.callsPath, calls } : {}),
  }).catch((err: unknown) => {
    // No store at all is no raw trace (the harness wrote none, or it was removed while it ran), not a converter fault.
    if (!isRollerError(err, ErrorCode.FILE_NOT_FOUND)) fail(ErrorCode.CONVERSION_FAILED, `the native session could not be converted: ${(err as Error).message}`);
    return [];
  });
  const session = sessions[0];
  if (!session) {
    const unattributed = calls.length > 0 ? `; ${calls.length} captured calls have no session to be attributed to` : '';
    if (out.errors.length === 0) fail(ErrorCode.NO_RAW_TRACE, `no raw session trace found: the harness left no native session (it wrote none, or it was removed while it ran)${unattributed}`);
    return out;
  }
  out.participants = session.participants;
  const spawns = session.usageExtra?.spawns_without_participant as SpawnWithoutParticipant[] | undefined;
  if (spawns && spawns.length > 0) out.spawnsWithoutParticipant = spawns;
  // conversion.json / usage.json are not written for a sample: their content lives in info.json (seeds/003 §2).
  out.conversion = session.conversion;
  if (sessions.length > 1) fail(ErrorCode.SEVERAL_SESSIONS, `the harness wrote ${sessions.length} root sessions for one task`);

  const adapter = harnessAdapter(src.harness);
  const tracePath = join(dir, 'trace.jsonl');
  const compacted = (await adapter.mainCompactions?.({ tracePath, calls, participants: session.participants })) ?? null;
  // Attributed once: the capture, the audits, the usage of auxiliary and compaction calls all read these.
  const { native, attribute } = await attributionOf(adapter, { nativeRoot: src.nativeRoot, version: src.harnessVersion, session, tracePath, profile: o.profile }, compacted?.recordedOutputs);
  const attributed = calls.map(attribute);
  // Once: for a lazy context it is a scan of the request's bytes (all of a sample's calls.jsonl).
  const generating = o.captureCalls || o.thinking ? attributed.filter(generatesOutput) : [];
  if (o.captureCalls) {
    const capPath = `capture/attempt-${String(src.attempt).padStart(4, '0')}`;
    const archive = nativeArchive(adapter.sessionFiles, src.nativeRoot);
    if (!adapter.nativeCapture) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${src.harness}: its adapter has no capture contract (NativeCapture), so its calls cannot be captured`);
    const manifest = await finalizeNativeCapture(
      { ...native, nativeFiles: archive.files },
      {
        dir: join(dir, capPath),
        calls: generating,
        attempt: src.attempt,
        scope: src.scope,
        debugRetention: o.debugRetention,
        nativeRoot: archive.root,
        ...(src.wireLog ? (src.wireLog.published ? { publishedWireLog: src.wireLog.path } : { wireLog: src.wireLog.path }) : {}),
        ...(src.createdAt ? { createdAt: src.createdAt } : {}),
      },
    );
    out.capture = { status: manifest.capture_status, path: capPath, coverage: manifest.coverage?.status ?? null, ...(manifest.token_continuity ? { token_continuity: { checked: manifest.token_continuity.checked, continuous: manifest.token_continuity.continuous, breaks: manifest.token_continuity.breaks.length } } : {}) };
  }
  const root = session.participants.find((p) => p.role === 'root');
  // Calls a participant made that no native message holds (title requests): real spend, in the sample's usage.
  const auxiliary = adapter.auxiliaryCall;
  if (auxiliary) {
    const found = attributed.filter((c) => c.participant_id !== null && auxiliary.test(c));
    if (found.length > 0) out.auxiliaryCalls = found.map((c) => ({ call_id: c.call_id, participant: c.participant_id!, rule: auxiliary.rule, tokens: tokensOfCall(c) }));
  }
  const actf: Actf | null = session.actf;
  if (compacted) {
    const segments = await writeCompactionSegments(dir, actf, attributed, compacted, { keepThinking: o.keepThinking, captureCalls: o.captureCalls }, out.conversion.trajectory_conversion as SampleInfo['runtime']['trajectory_conversion']);
    if (segments) out.segments = segments;
    out.compactionCalls = compactionCallUsage(compacted, calls);
  }
  out.audits = {
    completion: completionAudit(attributed.filter((c) => c.participant_id === root?.participant && c.execution_status === 'completed'), actf),
    modelIdentity: modelIdentityAudit(attributed),
    wireEffort: o.thinking ? wireEffortAudit(generating, o.thinking, generating.length === 0 && adapter.requestSnapshots ? await adapter.requestSnapshots(tracePath) : []) : null,
    thinking: o.thinking ? thinkingAudit(actf, o.thinking, o.keepThinking) : null,
  };
  return out;
}
