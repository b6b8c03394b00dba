import { join } from 'node:path';
import { z } from 'zod';
import { createDocumentSink } from '../../core/document-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { SftSegment } from '../../schemas/sft.js';

export const SftSegmentsOptions = z
  .strictObject({ dir: z.string().min(1).describe('the sample directory: each segment goes to its own path under it (sft_segments/NNNN.json)') })
  .describe('sft_segments/NNNN.json (seeds/003 §4.3): one masked record per compaction window');
export type SftSegmentsOptions = z.input<typeof SftSegmentsOptions>;

/** A segment and where it goes (its meta.path, relative to the sample). */
export interface SegmentFile {
  meta: { path: string };
  record: SftSegment;
}

export function createSftSegmentsSink(options: SftSegmentsOptions, open?: OpenOutput): Sink<SegmentFile> {
  const o = SftSegmentsOptions.parse(options);
  return createDocumentSink<SegmentFile>({ name: 'sft-segments', path: (s) => join(o.dir, s.meta.path), document: (s) => s.record, ...(open ? { open } : {}) });
}
