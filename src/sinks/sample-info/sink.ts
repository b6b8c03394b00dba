import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { SampleInfo } from '../../schemas/run-info.js';

export const SampleInfoOptions = z.strictObject({ path: z.string().min(1).describe("the sample's info.json path") }).describe('sample info.json (seeds/003 §5): status, attempts, usage, paths, runtime audits');
export type SampleInfoOptions = z.input<typeof SampleInfoOptions>;

export function createSampleInfoSink(options: SampleInfoOptions, open?: OpenOutput): Sink<SampleInfo> {
  const o = SampleInfoOptions.parse(options);
  return createDocumentSink<SampleInfo>({ name: 'sample-info', path: () => o.path, ...(open ? { open } : {}) });
}
