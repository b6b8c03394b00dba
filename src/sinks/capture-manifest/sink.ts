import { join } from 'node:path';
import { z } from 'zod';
import { abortableInput } from '../../core/abort.js';
import { writeJsonAtomic } from '../../core/atomic-write.js';
import { sha256File } from '../../core/hashing.js';
import type { OpenOutput } from '../../core/output.js';
import type { Sink, SinkReport } from '../../core/stage.js';
import type { Manifest } from '../../schemas/manifest.js';

export const CaptureManifestOptions = z
  .strictObject({ dir: z.string().min(1).describe('the capture attempt directory (manifest.json is written there)') })
  .describe('publishes a capture: the sha256 of every formal file, then manifest.json, last');
export type CaptureManifestOptions = z.input<typeof CaptureManifestOptions>;

/** A capture ready to publish: its manifest (files filled in here) and its formal files, with digests already known. */
export interface ManifestDraft {
  manifest: Manifest;
  /** Paths relative to the capture directory; a file without a digest is hashed here. */
  files: readonly { path: string; digest?: { sha256: string; bytes: number } }[];
}

/**
 * The capture's publisher (seeds/000): after everything it describes is written and closed, it hashes the formal
 * files it was not given digests of, and writes manifest.json atomically — the last file of a capture, so a
 * manifest names only complete files. A second draft replaces the first, as atomically.
 */
export function createCaptureManifestSink(options: CaptureManifestOptions, open?: OpenOutput): Sink<ManifestDraft> {
  const o = CaptureManifestOptions.parse(options);
  const name = 'capture-manifest';
  return {
    name,
    async consume(input, ctx): Promise<SinkReport> {
      let received = 0;
      let written: { sha256: string; bytes: number } | undefined;
      const path = join(o.dir, 'manifest.json');
      for await (const draft of abortableInput(input, ctx.signal)) {
        received++;
        const files: Manifest['files'] = {};
        for (const f of draft.files) files[f.path] = f.digest ?? (await sha256File(join(o.dir, f.path)));
        draft.manifest.files = files;
        const file = await writeJsonAtomic(path, draft.manifest, { signal: ctx.signal, ...(open ? { open } : {}) });
        written = { sha256: file.sha256, bytes: file.bytes };
      }
      ctx.counters.add(name, 'received', received);
      ctx.counters.add(name, 'emitted', received);
      return { name, received, written: received, ...(written ? { bytes: written.bytes, files: { [path]: written } } : {}) };
    },
  };
}
