import type { z } from 'zod';
import { Actf } from './actf.js';
import { AtifTrajectory } from './atif.js';
import { Call } from './call.js';
import { Lock } from './lock.js';
import { Manifest, Participant } from './manifest.js';
import { Relation } from './relation.js';
import { RunInfo, SampleInfo } from './run-info.js';
import { SftRecord, SftSegment, SftSubagentRecord } from './sft.js';
import { Task } from './task.js';
import { HermesEvent } from './harness-events.js';
import { Conversation, UserSimulatorEvent, UserSimulatorInfo } from './dialogue.js';
import type { RecordTypeName } from './record-type-names.js';

export { isRecordTypeName, RECORD_TYPE_NAMES, type RecordTypeName } from './record-type-names.js';

export interface RecordType {
  readonly schema: z.ZodType;
  /** Where roller writes it: one JSON document, or one record per JSONL line. */
  readonly files: readonly string[];
  readonly description: string;
}

/** Every record roller writes, by the name `roller schema` and `roller validate --schema` use. */
export const recordTypes = {
  call: { schema: Call, files: ['calls.jsonl'], description: 'roller.call/v1' },
  relation: { schema: Relation, files: ['relations.jsonl'], description: 'roller.relation/v1' },
  manifest: { schema: Manifest, files: ['manifest.json'], description: 'roller.capture/v1 manifest' },
  participant: { schema: Participant, files: ['manifest.json#participants'], description: 'a manifest participant' },
  actf: { schema: Actf, files: ['trace_ACTF.json'], description: 'unified analysis trace' },
  sft: { schema: SftRecord, files: ['trace_SFT.json', 'sft.jsonl'], description: 'linear SFT record' },
  'sft-segment': { schema: SftSegment, files: ['sft_segments/NNNN.json', 'sft_segments.jsonl'], description: 'compaction SFT segment' },
  'sft-subagent': { schema: SftSubagentRecord, files: ['sft_subagents.jsonl'], description: "a completed sub-agent's linear SFT record, with where it comes from" },
  atif: { schema: AtifTrajectory, files: ['trajectory.json'], description: 'ATIF v1.7 trajectory' },
  'run-info': { schema: RunInfo, files: ['info.json (run)'], description: 'run info.json' },
  'sample-info': { schema: SampleInfo, files: ['info.json (sample)'], description: 'sample info.json' },
  lock: { schema: Lock, files: ['lock.json'], description: 'run lock.json' },
  task: { schema: Task, files: ['tasks.jsonl'], description: 'a task line' },
  'hermes-events': { schema: HermesEvent, files: ['trace.jsonl (hermes)'], description: 'roller.hermes-events/v1' },
  conversation: { schema: Conversation, files: ['conversation.json'], description: 'roller.conversation/v1: the visible dialogue of a user-simulator task' },
  'user-simulator-info': { schema: UserSimulatorInfo, files: ['user_simulator/info.json'], description: 'roller.user-simulator-info/v1' },
  'user-simulator-events': { schema: UserSimulatorEvent, files: ['user_simulator/trace.jsonl'], description: 'roller.user-simulator-events/v1' },
} as const satisfies Record<RecordTypeName, RecordType>;
