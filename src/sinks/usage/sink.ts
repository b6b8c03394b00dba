import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';

export const UsageJsonOptions = z.strictObject({ path: z.string().min(1).describe('usage.json path') }).describe("usage.json of roller convert: every participant's own tokens");
export type UsageJsonOptions = z.input<typeof UsageJsonOptions>;

export function createUsageJsonSink(options: UsageJsonOptions, open?: OpenOutput): Sink<Record<string, unknown>> {
  const o = UsageJsonOptions.parse(options);
  return createDocumentSink<Record<string, unknown>>({ name: 'usage', path: () => o.path, ...(open ? { open } : {}) });
}
