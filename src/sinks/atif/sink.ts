import { join } from 'node:path';
import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { writeFileAtomic, writeJsonAtomic } from '../../core/atomic-write.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink, SinkReport } from '../../core/stage.js';
import { mkdir, rename, rm } from '../../core/thread-fs.js';
import { existsSync } from 'node:fs';

export const AtifOptions = z.strictObject({ output: z.string().min(1).describe('the export directory (<run>/atif by default)') }).describe('ATIF v1.7 trajectory.json per sample (+ images/), roller export');
export type AtifOptions = z.input<typeof AtifOptions>;

/** One sample's export: where it goes under the output, its trajectory, and its images (named by content). */
export interface AtifExport {
  rel: string;
  trajectory: unknown;
  images: readonly { path: string; bytes: Uint8Array }[];
}

/**
 * Each sample's trajectory.json and images/, built beside their place (`<dir>.partial`) and renamed into it when
 * complete: a sample's export is there whole or not at all.
 */
export function createAtifSink(options: AtifOptions, open?: OpenOutput): Sink<AtifExport> {
  const o = AtifOptions.parse(options);
  const name = 'atif';
  return {
    name,
    async consume(input, ctx): Promise<SinkReport> {
      let received = 0;
      let bytes = 0;
      const write = { signal: ctx.signal, ...(open ? { open } : {}) };
      for await (const item of abortableInput(input, ctx.signal)) {
        received++;
        const out = join(o.output, item.rel);
        const partial = `${out}.partial`;
        await rm(partial, { recursive: true, force: true });
        await mkdir(partial, { recursive: true });
        try {
          for (const image of item.images) {
            if (existsSync(join(partial, image.path))) continue; // named by content: written once
            await mkdir(join(partial, 'images'), { recursive: true });
            bytes += (await writeFileAtomic(join(partial, image.path), image.bytes, write)).bytes;
          }
          bytes += (await writeJsonAtomic(join(partial, 'trajectory.json'), item.trajectory, write)).bytes;
          await rm(out, { recursive: true, force: true });
          await rename(partial, out);
        } catch (err) {
          await rm(partial, { recursive: true, force: true });
          throw err;
        }
      }
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', received);
      return { name, received, written: received, bytes };
    },
  };
}
