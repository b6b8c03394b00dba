import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Lock } from '../../schemas/lock.js';

export const RunLockOptions = z.strictObject({ path: z.string().min(1).describe("the run's lock.json path") }).describe('run lock.json (seeds/003 §7.4): the conditions a resume must match');
export type RunLockOptions = z.input<typeof RunLockOptions>;

export function createRunLockSink(options: RunLockOptions, open?: OpenOutput): Sink<Lock> {
  const o = RunLockOptions.parse(options);
  return createDocumentSink<Lock>({ name: 'run-lock', path: () => o.path, ...(open ? { open } : {}) });
}
