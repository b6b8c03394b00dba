import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readCallsLazily } from '../sources/archive/calls-reader.js';
import { expandedPrompt } from '../transforms/capture/token-continuity.js';
import type { SampleInfo } from '../schemas/run-info.js';

/** One call's tokens as a reader wants them: the whole prompt (its stored prefix expanded), the completion, logprobs. */
export interface ExpandedTokens {
  call_id: string;
  participant_id: string | null;
  prompt: number[];
  completion: number[];
  /** Per completion token, as the server sent them; null when it sent none. */
  logprobs: number[] | null;
}

/**
 * A sample's calls with token ids, by response id, their prompts expanded (each call's stored prefix is its agent's
 * previous call's prompt + completion). Empty for a sample captured without them.
 */
export async function sampleCallTokens(dir: string, info: SampleInfo): Promise<Map<string, ExpandedTokens>> {
  const out = new Map<string, ExpandedTokens>();
  const capture = info.runtime.capture?.path;
  const file = capture ? join(dir, capture, 'calls.jsonl') : null;
  if (!file || !existsSync(file)) return out;
  const full = new Map<string, number[]>();
  for (const c of await readCallsLazily(file)) {
    if (!c.token_ids?.prompt) continue;
    const prompt = expandedPrompt(c.token_ids, (id) => full.get(id));
    if (!prompt) continue;
    const completion = c.token_ids.completion ?? [];
    full.set(c.call_id, [...prompt, ...completion]);
    const logprobs = c.logprobs ? c.logprobs.content.map((e) => Number(e.logprob)) : null;
    if (c.response_id) out.set(c.response_id, { call_id: c.call_id, participant_id: c.participant_id, prompt, completion, logprobs });
  }
  return out;
}
