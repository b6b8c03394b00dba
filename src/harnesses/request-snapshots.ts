import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

type Json = Record<string, any>;

/**
 * The request snapshots a harness recorded in trace.jsonl, line by line: only lines holding `marker` are parsed,
 * and `pick` takes a record's request parameters (undefined: not a snapshot). A line cut short is left out.
 */
export async function requestSnapshotsIn(tracePath: string, marker: string, pick: (record: Json) => Json | undefined): Promise<Json[]> {
  const out: Json[] = [];
  for await (const line of createInterface({ input: createReadStream(tracePath), crlfDelay: Infinity })) {
    if (!line.includes(marker)) continue;
    try {
      const params = pick(JSON.parse(line) as Json);
      if (params) out.push(params);
    } catch {
      // cut mid-write
    }
  }
  return out;
}
