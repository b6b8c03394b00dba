import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Actf } from '../../schemas/actf.js';

export const ActfOptions = z.strictObject({ path: z.string().min(1).describe('trace_ACTF.json path') }).describe('trace_ACTF.json (seeds/003 §4.2): the analysis trace, one document');
export type ActfOptions = z.input<typeof ActfOptions>;

export function createActfSink(options: ActfOptions, open?: OpenOutput): Sink<Actf> {
  const o = ActfOptions.parse(options);
  return createDocumentSink<Actf>({ name: 'actf', path: () => o.path, ...(open ? { open } : {}) });
}
