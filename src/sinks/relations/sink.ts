import { z } from 'zod';
import { createJsonlSink } from '../../core/jsonl-sink.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink } from '../../core/stage.js';
import type { Relation } from '../../schemas/relation.js';

export const RelationsJsonlOptions = z
  .strictObject({
    path: z.string().min(1).describe('relations.jsonl path'),
    sha256: z.boolean().default(true).describe('hash the file while writing (for the manifest)'),
  })
  .describe('one roller.relation/v1 record per line');
export type RelationsJsonlOptions = z.input<typeof RelationsJsonlOptions>;

export function createRelationsSink(options: RelationsJsonlOptions, open?: OpenOutput): Sink<Relation> {
  const o = RelationsJsonlOptions.parse(options);
  return createJsonlSink<Relation>({ path: o.path, sha256: o.sha256, name: 'relations-jsonl', ...(open ? { open } : {}) });
}
