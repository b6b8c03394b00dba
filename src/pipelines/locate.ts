import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { ErrorCode, RollerError } from '../core/errors.js';
import { RUN_INFO_SCHEMA, SAMPLE_INFO_SCHEMA } from '../schemas/run-info.js';
import { readChecked } from './run-reader.js';

/** What a directory a user names is: a run, one sample of a run, or one capture attempt. */
export type Located = { kind: 'run'; runDir: string } | { kind: 'sample'; runDir: string; sampleDir: string; path: string } | { kind: 'capture'; dir: string };

const Head = z.looseObject({ schema: z.string().optional(), runtime: z.looseObject({ capture: z.looseObject({ path: z.string() }).nullable().optional() }).optional() });

/**
 * A run, sample or capture directory, told apart by its own files (info.json's schema, manifest.json); a `capture/`
 * directory is its latest attempt. Anything else is a typed error saying what the commands take.
 */
export async function locate(given: string): Promise<Located> {
  const dir = resolve(given);
  if (existsSync(join(dir, 'manifest.json'))) return { kind: 'capture', dir };
  const attempts = existsSync(dir) && !existsSync(join(dir, 'info.json')) ? readdirSync(dir).filter((d) => /^attempt-\d{4}$/.test(d) && existsSync(join(dir, d, 'manifest.json'))).sort() : [];
  if (attempts.length > 0) return { kind: 'capture', dir: join(dir, attempts.at(-1)!) };
  if (!existsSync(join(dir, 'info.json'))) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${given}: neither a run, a sample nor a capture directory of roller's (no info.json or manifest.json); pass a run (<output>/<run-name>), one of its samples (samples/<model>/<index>_<task>) or a capture (capture/attempt-NNNN)`);
  }
  const head = await readChecked(Head, join(dir, 'info.json'), 'info.json');
  if (head.schema === RUN_INFO_SCHEMA) return { kind: 'run', runDir: dir };
  if (head.schema === SAMPLE_INFO_SCHEMA) {
    // <run>/samples/<model>/<index>_<task>
    const runDir = resolve(dir, '..', '..', '..');
    if (!existsSync(join(runDir, 'info.json'))) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${given}: a sample directory outside its run (no ${join(runDir, 'info.json')})`);
    return { kind: 'sample', runDir, sampleDir: dir, path: relative(runDir, dir) };
  }
  throw new RollerError(ErrorCode.INVALID_OPTIONS, `${join(given, 'info.json')}: neither a run's nor a sample's info.json (schema ${head.schema ?? 'missing'})`);
}

/** The capture attempts a run, sample or capture directory holds (a sample's final one each), with the sample they belong to. */
export async function capturesOf(given: string): Promise<{ sample: string | null; dir: string }[]> {
  const found = await locate(given);
  if (found.kind === 'capture') return [{ sample: null, dir: found.dir }];
  const samples = found.kind === 'sample' ? [found.sampleDir] : ((await readChecked(z.looseObject({ samples: z.array(z.looseObject({ path: z.string() })) }), join(found.runDir, 'info.json'), "run's info.json")).samples.map((r) => join(found.runDir, r.path)));
  const out: { sample: string | null; dir: string }[] = [];
  for (const s of samples) {
    if (!existsSync(join(s, 'info.json'))) continue;
    const capture = (await readChecked(Head, join(s, 'info.json'), "sample's info.json")).runtime?.capture?.path;
    if (capture) out.push({ sample: relative(found.runDir, s), dir: join(s, capture) });
  }
  if (out.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${given}: no published capture in this ${found.kind} (collected without --capture-calls: collect it again with it)`);
  return out;
}
