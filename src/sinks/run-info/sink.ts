import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { RunInfo } from '../../schemas/run-info.js';

export const RunInfoOptions = z.strictObject({ path: z.string().min(1).describe("the run's info.json path") }).describe('run info.json (seeds/003 §5.2): each snapshot replaces the last, atomically (checkpoints; see runInfoCheckpoints)');
export type RunInfoOptions = z.input<typeof RunInfoOptions>;

export function createRunInfoSink(options: RunInfoOptions, open?: OpenOutput): Sink<RunInfo> {
  const o = RunInfoOptions.parse(options);
  return createDocumentSink<RunInfo>({ name: 'run-info', path: () => o.path, ...(open ? { open } : {}) });
}
