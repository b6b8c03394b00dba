/**
 * The names of the record types (registry.ts maps each to its schema). Apart from the schemas so that the
 * CLI can list and check them without building every zod schema at start-up (~0.17 s and ~17 MB).
 */
export const RECORD_TYPE_NAMES = [
  'call',
  'relation',
  'manifest',
  'participant',
  'actf',
  'sft',
  'sft-segment',
  'sft-subagent',
  'atif',
  'run-info',
  'sample-info',
  'lock',
  'task',
  'hermes-events',
  'conversation',
  'user-simulator-info',
  'user-simulator-events',
] as const;

export type RecordTypeName = (typeof RECORD_TYPE_NAMES)[number];

export function isRecordTypeName(name: string): name is RecordTypeName {
  return (RECORD_TYPE_NAMES as readonly string[]).includes(name);
}
