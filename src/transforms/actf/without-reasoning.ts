import type { Actf } from '../../schemas/actf.js';

/**
 * The ACTF of `--no-keep-thinking` (seeds/003: reasoning emptied in ACTF as in SFT; raw keeps the original events):
 * each step's visible reasoning becomes '' — a step that had none keeps null, so "emptied" and "none" stay apart.
 */
export function withoutReasoning(actf: Actf): Actf {
  return {
    ...actf,
    steps: actf.steps.map((s) => (s.assistant_content.reasoning_content === null ? s : { ...s, assistant_content: { ...s.assistant_content, reasoning_content: '' } })),
  };
}
