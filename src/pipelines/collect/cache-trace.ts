import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
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
