import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { SftRecord } from '../../schemas/sft.js';

export const SftOptions = z.strictObject({ path: z.string().min(1).describe('trace_SFT.json path') }).describe('trace_SFT.json (seeds/003 §4.3): the linear SFT record, one document');
export type SftOptions = z.input<typeof SftOptions>;

export function createSftSink(options: SftOptions, open?: OpenOutput): Sink<SftRecord> {
  const o = SftOptions.parse(options);
  return createDocumentSink<SftRecord>({ name: 'sft', path: () => o.path, ...(open ? { open } : {}) });
}
