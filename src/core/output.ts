import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';

/**
 * How sinks open their files. Injectable so that tests (and users) can hand a sink a stalling,
 * failing or in-memory destination without touching the sink's code.
 */
export type OpenOutput = (path: string) => Promise<Writable> | Writable;

export const DEFAULT_WRITE_HIGH_WATER_MARK = 1 << 20;

export const openFileOutput: OpenOutput = async (path) => {
  await mkdir(dirname(path), { recursive: true });
  const stream = createWriteStream(path, { flags: 'w', highWaterMark: DEFAULT_WRITE_HIGH_WATER_MARK });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  return stream;
};
