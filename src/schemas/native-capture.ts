import type { Call } from './call.js';
import type { Manifest } from './manifest.js';
import type { ParticipantUsage } from './participant-usage.js';

/**
 * What native files can say about a capture's outputs, for the coverage check (seeds/000):
 * - per_id: every participant's outputs by id (ParticipantUsage.message_ids: Claude Code message.id,
 *   Codex response_id, Pi responseId) — each must be a captured call, and each call one of them;
 * - count: only how many outputs each participant made (OpenCode completed assistant messages, OpenClaw
 *   stream contexts) — weaker: it cannot tell which call is which;
 * - none: the harness writes nothing to check against (say why).
 */
export type NativeOutputs =
  | { method: 'per_id' }
  | {
      method: 'count';
      counts: Readonly<Record<string, number>>;
      /**
       * Which captured calls can leave a native output (by the request's own shape, never its text, time or
       * order), and the rule in words for the manifest — e.g. OpenCode's title requests offer no tools and
       * write no assistant message. Absent: every completed call counts.
       */
      counted?: { rule: string; test(call: Call): boolean };
    }
  | { method: 'none'; reason: string };

/**
 * Identity evidence on the wire besides response ids: a header value (as the proxy recorded it in
 * native_identity) that names one participant — OpenCode's x-session-id, roller's injected x-roller-*
 * headers for Pi. Used only where the response id joins nothing.
 */
export interface HeaderJoin {
  /** The identity field, or fields in order of preference (the first a call carries is used). */
  field: keyof Call['native_identity'] | readonly (keyof Call['native_identity'])[];
  /** header value -> participant id */
  participants: Readonly<Record<string, string>>;
}

/**
 * Identity evidence in the calls themselves, for a harness whose records keep neither response ids nor identity headers
 * but do keep the tool-call ids the model emitted (Hermes): a call whose response emitted, or whose input answers, a
 * tool call a participant's records hold is that participant's (the ids are the model's, unique per call; a child
 * never sees its parent's tool calls, nor a parent its child's). Used only where the joins before it decide nothing.
 */
export interface ToolCallJoin {
  /** tool-call id -> participant */
  owners: Readonly<Record<string, string>>;
  /** Where the ids were read (named in the evidence). */
  source: string;
}

/**
 * OpenClaw delivers a child's completion as a run of its parent (`announce:v1:<child key>:<child run id>`):
 * a delivery is established only in a call that is one of that run's replies (by response id) and whose input
 * carries the completion event (seeds/000 A5.3). `runs`: child native id -> its announcement run; a child
 * without one (no cache trace, or the trace names no such run) has its deliveries recorded as unknown.
 */
export interface Announcements {
  /** Where the runs were read (named in relation evidence). */
  source: string;
  runs: Readonly<Record<string, { runId: string; responseIds: readonly string[] }>>;
}

/**
 * The adapter contract: what a harness adapter hands the capture layer after a run. Claude Code and Codex
 * implement it from their session files; OpenCode (SQLite, per-session counts and x-session-id), Pi (session
 * tree, responseId, an injected header), OpenClaw (stream contexts), Hermes and DeepSeek (roller-defined
 * event schemas) fit the same shape with a count or header join where they have no per-id evidence.
 */
export interface NativeCapture {
  harness: Manifest['harness'];
  /** Participants with native ids, roles, tree position, tokens, status and where it was read. */
  participants: ParticipantUsage[];
  capabilities: Manifest['capabilities'];
  outputs: NativeOutputs;
  headerJoin?: HeaderJoin;
  toolCallJoin?: ToolCallJoin;
  /**
   * A harness with neither output ids nor identity headers, and one participant (OpenClaw exec): every call
   * through this capture's own proxy is that participant's — the evidence is the dedicated proxy, said so.
   */
  soleParticipant?: { participant: string; evidence: string };
  /**
   * Calls whose output a native record keeps without any id (Claude Code's compaction summaries), found by
   * the adapter from its own records: call id -> participant and the evidence in words.
   */
  recordedOutputs?: Readonly<Record<string, { participant: string; evidence: string }>>;
  /** Native agent paths (Codex) used to name sub-agents in relations. */
  agentPaths?: Readonly<Record<string, string>>;
  /** Deliveries bound to announcement runs (OpenClaw); present when the harness delivers that way. */
  announcements?: Announcements;
  /** The native files the participants were read from (kept under raw/native/ per retention). */
  nativeFiles: string[];
}


/** One compaction of a main context, as the harness records it (Claude Code: a compact_boundary record). */
export interface NativeCompaction {
  /** The native record that marks it. */
  boundary: string;
  /** The native record holding its summary (null when the session ends before it). */
  summaryRecord: string | null;
  /** How a segment names it in boundary_source (e.g. `claude-code compact_boundary <uuid>`). */
  source: string;
}

/** A compacted main context: its compactions, and the calls that wrote their summaries (found by the adapter). */
export interface NativeCompactions {
  root: ParticipantUsage;
  compactions: NativeCompaction[];
  /** call id -> the compaction whose summary it wrote. */
  summaryCalls: Map<string, NativeCompaction>;
  /** Each summary call's attribution evidence (NativeCapture.recordedOutputs). */
  recordedOutputs: Record<string, { participant: string; evidence: string }>;
}
