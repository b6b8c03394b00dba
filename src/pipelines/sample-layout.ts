/**
 * Every file of a sample directory (seeds/003 §2), in one table: who reads the layout — a retry's cleanup, reprocess's
 * families and kept-as-is copies, info.json's paths, the readers — reads it here.
 *
 * - `family`: what a reprocess re-derives it with (`actf`, `sft`, `capture`: `--only` selects among them); `kept`: no
 *   projection derives it, it is copied as bytes (task outputs, diagnostic layers, the dialogue's own records, logs);
 *   `info`: written last, from all the others.
 * - `perAttempt`: an attempt's output, removed before a retry so nothing of an earlier attempt mixes in (seeds/003
 *   §7.3); rollout/ is not: it keeps every attempt's logs.
 * - `infoKey`: where info.json names it.
 */
export const SAMPLE_FILES = [
  { path: 'trace.jsonl', family: 'actf', perAttempt: true, infoKey: 'trajectory.raw' },
  { path: 'trace_ACTF.json', family: 'actf', perAttempt: true, infoKey: 'trajectory.actf' },
  { path: 'trace_SFT.json', family: 'sft', perAttempt: true, infoKey: 'trajectory.sft' },
  { path: 'sft_segments', family: 'sft', perAttempt: true, infoKey: 'trajectory.sft_segments' },
  { path: 'trace_SFT_subagents.jsonl', family: 'sft', perAttempt: true, infoKey: 'trajectory.sft_subagents' },
  { path: 'capture', family: 'capture', perAttempt: true, infoKey: 'runtime.capture.path' },
  { path: 'wire_trace.jsonl', family: 'kept', perAttempt: true, infoKey: null },
  { path: 'tools_capture.jsonl', family: 'kept', perAttempt: true, infoKey: null },
  { path: 'cache_trace.jsonl', family: 'kept', perAttempt: true, infoKey: null },
  { path: 'results', family: 'kept', perAttempt: true, infoKey: 'results' },
  { path: 'conversation.json', family: 'kept', perAttempt: true, infoKey: null },
  { path: 'user_simulator', family: 'kept', perAttempt: true, infoKey: 'runtime.user_simulator.path' },
  { path: 'grader', family: 'kept', perAttempt: true, infoKey: 'grade' },
  { path: 'rollout', family: 'kept', perAttempt: false, infoKey: null },
  { path: 'info.json', family: 'info', perAttempt: true, infoKey: null },
] as const;

export type SampleFile = (typeof SAMPLE_FILES)[number];
export type SampleFamily = SampleFile['family'];

/** The names writers and readers use for the files above. */
export const SAMPLE_FILE = {
  raw: 'trace.jsonl',
  actf: 'trace_ACTF.json',
  sft: 'trace_SFT.json',
  segments: 'sft_segments',
  subagents: 'trace_SFT_subagents.jsonl',
  capture: 'capture',
  rollout: 'rollout',
  info: 'info.json',
} as const satisfies Record<string, SampleFile['path']>;

/** The dialogue's user simulator files (seeds/003 §2.3) and the grader's logs. */
export const USER_SIMULATOR_DIR = 'user_simulator';
export const GRADER_DIR = 'grader';

/** The paths of a family (or of several). */
export function sampleFilesOf(...families: SampleFamily[]): string[] {
  return SAMPLE_FILES.filter((f) => (families as string[]).includes(f.family)).map((f) => f.path);
}

/** What a retry removes before its attempt. */
export const PER_ATTEMPT_FILES: readonly string[] = SAMPLE_FILES.filter((f) => f.perAttempt).map((f) => f.path);
