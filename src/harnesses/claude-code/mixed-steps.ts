import { readFile } from 'node:fs/promises';
import type { Actf } from '../../schemas/actf.js';

/**
 * Claude Code: does the main ACTF hold a step whose message is a sub-agent's (a sidechain record of
 * trace.jsonl)? Older rollers put sub-agent turns into the main trajectory; such samples are never reused.
 */
export async function claudeCodeMixesSubAgentSteps(trace: string, actf: Actf): Promise<boolean> {
  const sub = new Set<string>();
  for (const line of (await readFile(trace, 'utf8')).split('\n')) {
    if (!line.includes('"isSidechain":true')) continue;
    try {
      const r = JSON.parse(line) as { type?: string; isSidechain?: boolean; message?: { id?: string } };
      if (r.isSidechain === true && r.type === 'assistant' && r.message?.id) sub.add(r.message.id);
    } catch {
      // a bad line: the raw check elsewhere reports it
    }
  }
  return actf.steps.some((s) => {
    const id = (s as { native_ids?: { message_id?: string } }).native_ids?.message_id;
    return id !== undefined && sub.has(id);
  });
}
