import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import type { HarnessRunner } from '../../harnesses/adapter.js';
import { createInterface } from 'node:readline';
import { redactCredentialValues } from './lock.js';

/**
 * OpenClaw's cache trace into the sample (seeds/003 --cache-trace with --wire-trace full): line by line, each JSON
 * line with credential values redacted; a line that is not JSON (the harness stopped mid-write) is left out and
 * counted. Returns how many lines were kept and dropped.
 */
export async function copyCacheTrace(from: string, to: string): Promise<{ kept: number; dropped: number }> {
  const out = createWriteStream(to, { mode: 0o600 });
  let kept = 0;
  let dropped = 0;
  try {
    for await (const line of createInterface({ input: createReadStream(from), crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        dropped++;
        continue;
      }
      if (!out.write(`${JSON.stringify(redactCredentialValues(event))}\n`)) await once(out, 'drain');
      kept++;
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
  return { kept, dropped };
}

/**
 * The harness's own cache trace, redacted, into its native root (runner.cacheTraceInNative), where its adapter reads
 * it as native evidence. undefined: the runner keeps none; 'absent': the harness wrote none.
 */
export async function keepCacheTrace(runner: HarnessRunner, home: string): Promise<{ path: string; dropped: number } | 'absent' | undefined> {
  const from = runner.cacheTraceFile?.(home);
  if (!from || !runner.cacheTraceInNative) return undefined;
  if (!existsSync(from)) return 'absent';
  const path = join(runner.nativeRoot(home), runner.cacheTraceInNative);
  await mkdir(dirname(path), { recursive: true });
  const { dropped } = await copyCacheTrace(from, path);
  return { path, dropped };
}
