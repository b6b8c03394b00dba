import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { compactJson } from '../core/compact-json.js';
import { readFile } from '../core/thread-fs.js';
import type { Actf } from '../schemas/actf.js';
import type { FinishedSample, SampleSftLines } from '../schemas/finished-sample.js';
import type { Relation } from '../schemas/relation.js';
import type { SampleInfo } from '../schemas/run-info.js';
import { readCallsLazily } from '../sources/archive/calls-reader.js';

export type { FinishedSample, SampleSftLines };

/**
 * A finished sample from its directory; `encoded`: its run-level SFT lines when a worker encoded them already
 * (reprocess), with `release` called once they have been taken.
 */
export function finishedSample(dir: string, info: SampleInfo, encoded?: SampleSftLines | null, release?: () => void): FinishedSample {
  let released = false;
  return {
    dir,
    index: info.index,
    info,
    actf: async () => (info.trajectory.actf ? (JSON.parse(await readFile(join(dir, info.trajectory.actf), 'utf8')) as Actf) : null),
    calls: async function* () {
      const capture = capturePath(info);
      if (capture && existsSync(join(dir, capture, 'calls.jsonl'))) yield* await readCallsLazily(join(dir, capture, 'calls.jsonl'));
    },
    relations: async () => {
      const capture = capturePath(info);
      if (!capture) return [];
      const text = await readFile(join(dir, capture, 'relations.jsonl'), 'utf8').catch(() => '');
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Relation);
    },
    sftLines: async () => {
      if (encoded === undefined) return sampleSftLines(dir, info);
      if (!released) release?.();
      released = true;
      return encoded;
    },
  };
}

/**
 * A sample's contribution (seeds/003 §4.3–4.4): ok and reused samples only; a compacted one's segments, else
 * its linear record when eligible. null: it contributes nothing.
 */
export async function sampleSftLines(dir: string, info: SampleInfo): Promise<SampleSftLines | null> {
  if (info.status !== 'ok' && info.status !== 'skipped') return null;
  // The files are roller's own (JSON.stringify with an indent): their compact form is the line, byte for byte.
  const line = async (rel: string) => compactJson(await readFile(join(dir, rel)), { newline: true, origin: join(dir, rel) });
  // Sub-agents' records are JSON lines already (only eligible ones are written).
  const subagents = info.trajectory.sft_subagents ? await readFile(join(dir, info.trajectory.sft_subagents)) : null;
  if (info.trajectory.sft_segments && info.trajectory.sft_segments.length > 0) {
    const parts: Buffer[] = [];
    for (const s of info.trajectory.sft_segments) parts.push(await line(s.path));
    return { linear: null, segments: Buffer.concat(parts), subagents };
  }
  const linear = info.runtime.sft_eligibility?.eligible && info.trajectory.sft ? await line(info.trajectory.sft) : null;
  if (!linear && !subagents) return null;
  return { linear, segments: null, subagents };
}

const capturePath = (info: SampleInfo): string | undefined => info.runtime.capture?.path;
