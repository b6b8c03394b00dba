import { basename, dirname, relative } from 'node:path';

/** A finished sample's run (by its directory's name) and its directory within it: <run>/samples/<model>/<index>_<task>. */
export function sampleLocation(sampleDir: string): { run: string; sample: string } {
  const runDir = dirname(dirname(dirname(sampleDir)));
  return { run: basename(runDir), sample: relative(runDir, sampleDir) };
}
