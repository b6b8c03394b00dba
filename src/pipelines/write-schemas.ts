import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic, type WrittenFile } from '../core/atomic-write.js';
import { recordTypes } from '../schemas/registry.js';

/** One JSON Schema (draft 2020-12) per record type, generated from the zod schemas. */
export async function writeJsonSchemas(outDir: string): Promise<WrittenFile[]> {
  const written: WrittenFile[] = [];
  for (const [name, type] of Object.entries(recordTypes)) {
    const generated = z.toJSONSchema(type.schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output' });
    const document = {
      ...generated,
      $id: `urn:roller:schema:${name}`,
      title: name,
      description: generated.description ?? type.description,
      'x-roller-files': type.files,
    };
    written.push(await writeJsonAtomic(join(outDir, `${name}.schema.json`), document));
  }
  return written;
}
