import type { Rejected } from '../core/rejected.js';
import type { Actf } from '../schemas/actf.js';
import type { ApiProtocol } from '../schemas/api-protocol.js';
import type { Call } from '../schemas/call.js';
import type { NativeCapture, NativeCompactions } from '../schemas/native-capture.js';
import type { ParticipantUsage } from '../schemas/participant-usage.js';
import type { ProcessPlan } from '../sources/process-runner.js';
import type { CorrelationHeaders } from '../sources/proxy/headers.js';
import type { DeliveryRecogniser } from '../transforms/capture/evidence.js';
import type { HarnessVerify } from './verify-scenario.js';

/**
 * The harness adapter contract (DESIGN.md §4): everything roller knows about one harness, behind one interface —
 * its pinned CLI and launch plan, where its native files are, its reader (native sessions as converted data), its
 * NativeCapture for the capture layer, and its sub-agents for ATIF. `roller convert`, collect, reprocess, verify
 * and export dispatch through the registry (index.ts); adding a harness is a folder and one registry line.
 */
export interface HarnessAdapter {
  /** As it appears on the command line and in records (manifest harness.name, info.json). */
  readonly name: string;
  /** info.json trajectory.raw_schema of its trace.jsonl. */
  readonly rawSchema: string;
  /** The native session files under a converter root (session data only: never settings, caches or credentials). */
  readonly sessionFiles: RegExp;
  /** The native sessions under `native` (a HOME, config dir, database or file), as data the converter's sinks write. */
  convert(native: string, input: ConvertInput): Promise<SessionConversion[]>;
  /** The capture contract of one converted session (a collect sample or a reprocessed archive); absent: not captured. */
  nativeCapture?(input: CaptureInput): Promise<NativeCapture>;
  /** A compacted main context (compaction segments), when the harness records compactions. */
  mainCompactions?(input: CompactionInput): Promise<NativeCompactions | null>;
  /**
   * The request parameters the harness itself recorded before each model call, read from the sample's trace.jsonl
   * (Claude Code's `api-request` params, Pi's recorder payloads): what the effort audit reads when no call was captured.
   */
  requestSnapshots?(tracePath: string): Promise<Record<string, any>[]>;
  /** Sub-agents as ATIF embedded trajectories, from a sample's trace.jsonl records. */
  atifSubagents?(records: readonly Record<string, unknown>[], participants: readonly Pick<ParticipantUsage, 'participant' | 'native_id' | 'role'>[]): AtifSubagent[];
  /**
   * Model calls of a participant that write no native message (OpenCode's title requests): their tokens are the
   * participant's spend that its native records do not hold, added to the sample's usage as auxiliary calls.
   */
  readonly auxiliaryCall?: { rule: string; test(call: Call): boolean };
  /** How a finished child's result reaches its parent's input, other than as a tool result (absent: only so). */
  readonly delivery?: DeliveryRecogniser;
  /** Headers the CLI sends to the model API that name its session or agent: forwarded unchanged, their values recorded as native identity. */
  readonly identityHeaders?: CorrelationHeaders;
  /** Headers the CLI sends for the proxy's join only (seeds/000: OpenCode's x-session-id): recorded, removed before forwarding. */
  readonly correlationHeaders?: CorrelationHeaders;
  /** A finished sample whose main ACTF holds a sub-agent's steps (written by an older roller): never reused on resume. */
  mixesSubAgentSteps?(tracePath: string, actf: Actf): Promise<boolean>;
  /** Present when roller can run the harness CLI (collect, verify). */
  readonly runner?: HarnessRunner;
}

export interface ConvertInput {
  /** The captured calls of the run (roller proxy's calls.jsonl): system prompt and tools come from them. */
  calls?: readonly Call[];
  /** The CLI's own stdout stream, where the harness has one to cross-check (Claude Code stream-json). */
  stream?: string;
}

/** One root session as an adapter read it: trace.jsonl records, ACTF, participants and where each came from. */
export interface SessionConversion {
  sessionId: string;
  /** trace.jsonl: the native records as the harness wrote them (its own schema, `rawSchema`). */
  trace: Iterable<unknown>;
  actf: Actf;
  participants: ParticipantUsage[];
  /** Where the session was read (conversion.json `source`). */
  source: Record<string, unknown>;
  /** For messages: the input, as a user would name it. */
  where: string;
  /** A harness rule that rules SFT out before projecting (Codex: tools only from a capture). */
  sftBlocker?: string | null;
  /** Extra usage.json fields (Codex: spawns without a participant). */
  usageExtra?: Record<string, unknown>;
  /** Lines that could not be read (a crash mid-write), kept as data. */
  rejects?: readonly Rejected[];
  /** The root participant's own files: a damaged line there makes its trajectory incomplete (no SFT). */
  mainFiles?: readonly string[];
  /** The CLI stream cross-checked against the native files, when one was given. */
  streamCheck?: { source: string; problems: string[] } | null;
  /** Known records read with a redundant field missing: what was read in its place (conversion.json read_notes). */
  readNotes?: readonly string[];
}

/** A capture error that leaves the harness's own turn standing (runtime.capture_errors). */
export interface CaptureFailure {
  code: string;
  message: string;
  /** Children the error leaves open: `unknown` when the registry never answered, `partial` when one ended but its completion was not delivered, `running` when it had not ended. */
  children: { native_id: string | null; native_status: string | null; delivery_status: string | null; recorded: 'unknown' | 'partial' | 'running' }[];
}

export interface CaptureInput {
  /** The converter's root (a sample's HOME or an archive's raw/native/). */
  nativeRoot: string;
  version: string;
  session: Pick<SessionConversion, 'sessionId' | 'participants'>;
  /** The sample's trace.jsonl (written from the session). */
  tracePath: string;
  /** A non-default harness profile (lock.json harness_profile), e.g. Pi's example sub-agent extension. */
  profile: string | null;
}

export interface CompactionInput {
  tracePath: string;
  calls: readonly Call[];
  participants: readonly ParticipantUsage[];
}

export interface AtifSubagent {
  id: string;
  participant: string;
  actf: Actf;
}

/** Running the pinned CLI headless, offline, against roller's proxy (collect, verify). */
export interface HarnessRunner {
  /** The CLI roller installs, by exact version (installer.ts). */
  readonly pin: HarnessPin;
  /** `roller verify`'s scenarios for it and the version matrix's (absent: verify refuses the harness). */
  readonly verify?: HarnessVerify;
  /** Non-default profiles collect can run it with, each selected by a collect option of its own (lock.json harness_profile). */
  readonly profiles?: readonly HarnessProfile[];
  /** The converter root of a run, under its fresh HOME. */
  nativeRoot(home: string): string;
  plan(launch: RunLaunch): Promise<ProcessPlan>;
  /**
   * Why a run with these options has no delegation tool (the harness is not offered one: its sub-agent tasks cannot
   * delegate), or null when it has one. Said at the start of a collect and recorded in the run's info.json.
   */
  delegationOff?(run: { captureCalls: boolean; profile: string | null }): string | null;
  /** A combination of collect options this harness cannot honour, said before anything runs (null: none). */
  refusesOptions?(o: { thinking: string | null; keepThinking: boolean }): string | null;
  /** Reasoning levels `--thinking` can set (none: it is refused for this harness). */
  readonly thinkingLevels: readonly string[];
  /** The first release that takes a reasoning level (an older --harness-version refuses --thinking). */
  readonly thinkingSince?: string;
  /** Follow-up prompts continue the session the first one opened (Claude Code --resume): its id from the stdout. */
  sessionOfStdout?(stdoutPath: string): Promise<string | null>;
  /** The reply the user saw for one prompt (its final assistant text), from that prompt's stdout: what a user simulator reads. */
  replyOfStdout?(stdoutPath: string): Promise<string | null>;
  /** A harness with a cache trace of its own (OpenClaw, seeds/003 --cache-trace): where a launch in this HOME writes it. */
  cacheTraceFile?(home: string): string;
  /** Where under nativeRoot roller keeps that trace, credential values redacted, as native evidence (raw/native/). */
  cacheTraceInNative?: string;
  /**
   * An exit that says the turn succeeded but capture did not finish (OpenClaw: sub-agents that did not settle):
   * the capture error to record, the sample keeping the turn's status (seeds/000). null: an ordinary failure.
   */
  captureFailure?(home: string, exitCode: number): Promise<CaptureFailure | null>;
  /** What the CLI itself reported about the run (Claude Code's result events), for info.json. */
  reported?(stdoutPaths: readonly string[]): Promise<Record<string, unknown> | null>;
  /**
   * The model API protocols its provider configuration can be pointed at, its own first (the default of a model config
   * that names none); a model in any other is refused before anything runs.
   */
  readonly protocols: readonly ApiProtocol[];
  /** Applies a model's context_window / auto_compact_percent. */
  readonly contextSettings: boolean;
  /** Its tools come only from captured requests: tools_capture.jsonl stays in the sample (Codex, seeds/003 §2.1). */
  readonly keepsToolsCapture?: boolean;
  /** The most bytes of one prompt the CLI takes, where it says (OpenClaw: a 4 MiB message file). */
  readonly maxPromptBytes?: number;
  /**
   * Files (relative to the work directory) the CLI reads as its own configuration: a task may not write them, since
   * they could move its model endpoint, its credential or its proxy away from roller's recording proxy.
   */
  readonly configFiles?: readonly string[];
  /**
   * Its user-level configuration (relative to the attempt's HOME), which roller may write before each prompt: one the
   * harness's run changes was written by the agent (the CLI does not write these itself).
   */
  readonly homeConfigFiles?: readonly string[];
}

/**
 * A way of running the harness other than roller's default: `name` is recorded in lock.json (null: the default,
 * named explicitly). The collect option `option` selects it: a flag alone, or `option value` where a value is given.
 */
export interface HarnessProfile {
  name: string | null;
  option: string;
  value?: string;
  description: string;
}

export interface HarnessPin {
  package: string;
  version: string;
  /** Its command under node_modules/.bin. */
  bin: string;
  /**
   * What npm installs in place of `package@version`: a local directory or tarball (a harness of one's own, the tests'
   * toy harness). Its package.json must carry `version`.
   */
  source?: string;
  /** A Node runtime the CLI needs other than roller's own (OpenClaw: Node 24). */
  runtime?: { package: string; version: string; bin: string };
  /** What its install needs beyond `npm install PKG@VERSION` (DeepSeek: npm flags and its peer packages). */
  install?: { npmFlags: readonly string[]; packages: readonly string[] };
  /**
   * A Python package from PyPI (Hermes) instead of npm: installed into a virtual environment of its own, on a Python
   * of these versions (`bin` is then its command under the venv's bin/).
   */
  pypi?: { python: { min: string; below: string } };
}

/** One launch of the CLI: the common part, and options only some harnesses take. */
export interface RunLaunch {
  bin: string;
  /** The installed CLI's version: flags and settings differ between releases (see each runner's version notes). */
  version?: string;
  prompt: string;
  home: string;
  work: string;
  baseUrl: string;
  apiKey: string;
  /** An API model's name (absent: the scripted model the provider config names). */
  model?: string;
  /** The protocol the provider configuration speaks (one of the runner's `protocols`; absent: its first). */
  protocol?: ApiProtocol;
  /** --thinking. */
  thinking?: string;
  /** --capture-calls: calls are recorded (OpenCode offers its sub-agent `task` tool only then, seeds/000). */
  captureCalls?: boolean;
  /** --cache-trace: the harness writes its own cache trace (OpenClaw) to the runner's cacheTraceFile(home). */
  cacheTrace?: boolean;
  /** Continue this native session (a follow-up prompt). */
  continueSession?: string;
  /** context_window / auto_compact_percent of the model config. */
  context?: { window?: number; autoCompactPercent?: number };
  /** The Node runtime installed with the CLI, when it needs one. */
  runtime?: string;
  /** The whole task's time, for CLIs that take a deadline of their own. */
  timeoutS?: number;
  /** A non-default profile (Pi's example sub-agent extension, OpenClaw's embedded exec). */
  profile?: string | null;
  /** More arguments (a verify scenario's), and options of this harness only (Codex agent roles). */
  extraArgs?: string[];
  harnessOptions?: Record<string, unknown>;
}
