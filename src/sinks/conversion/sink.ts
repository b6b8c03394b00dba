import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';

export const ConversionJsonOptions = z.strictObject({ path: z.string().min(1).describe('conversion.json path') }).describe('conversion.json of roller convert: sources, what was converted and what not, rejected lines');
export type ConversionJsonOptions = z.input<typeof ConversionJsonOptions>;

export function createConversionJsonSink(options: ConversionJsonOptions, open?: OpenOutput): Sink<Record<string, unknown>> {
  const o = ConversionJsonOptions.parse(options);
  return createDocumentSink<Record<string, unknown>>({ name: 'conversion', path: () => o.path, ...(open ? { open } : {}) });
}
