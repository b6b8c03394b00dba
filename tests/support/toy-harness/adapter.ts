/**
 * A harness that exists only in the tests: its "native" sessions are *.toy.jsonl files of {kind, text, id?, usage?}
 * lines. It proves the adapter contract is enough — registering it (registerHarness) lets `convert` run it without
 * a line of src/pipelines knowing it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { HarnessAdapter } from '../../../src/harnesses/adapter.js';
import { ACTF_SCHEMA_VERSION, type ActfStep } from '../../../src/schemas/actf.js';
import { newStep, timingOf } from '../../../src/transforms/actf/step.js';

interface ToyLine {
  kind: 'user' | 'assistant';
  text: string;
  id?: string;
  usage?: { input: number; output: number };
}

export const toyAdapter: HarnessAdapter = {
  name: 'toy',
  rawSchema: 'toy-session-jsonl',
  sessionFiles: /\.toy\.jsonl$/,
  async convert(native) {
    const files = native.endsWith('.toy.jsonl') ? [native] : readdirSync(native).filter((f) => f.endsWith('.toy.jsonl')).map((f) => join(native, f));
    return files.map((file) => {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ToyLine);
      const sessionId = basename(file, '.toy.jsonl');
      const steps: ActfStep[] = [];
      let pending: string | null = null;
      for (const l of lines) {
        if (l.kind === 'user') pending = l.text;
        else {
          const step = newStep(steps.length + 1, pending, null);
          step.assistant_content.content = l.text;
          step.stop_reason = 'end_turn';
          steps.push(step);
          pending = null;
        }
      }
      const assistants = lines.filter((l) => l.kind === 'assistant');
      return {
        sessionId,
        trace: lines,
        actf: { schema_version: ACTF_SCHEMA_VERSION, system_prompt: '', system_prompt_source: 'none', tools: null, tools_source: 'none', steps, timing: timingOf(steps) },
        participants: [
          {
            participant: `session:${sessionId}`,
            role: 'root',
            native_id: sessionId,
            parent: null,
            spawn_tool_call_id: null,
            depth: 0,
            tokens: { input: assistants.reduce((a, l) => a + (l.usage?.input ?? 0), 0), cache_creation: 0, cache_read: 0, output: assistants.reduce((a, l) => a + (l.usage?.output ?? 0), 0), reasoning: 0 },
            messages: assistants.length,
            message_ids: assistants.map((l) => l.id ?? ''),
            status: 'completed',
            status_source: `${basename(file)}:${lines.length}`,
            cost_usd: null,
            cost_note: null,
            reason: null,
          },
        ],
        source: { file },
        where: file,
      };
    });
  },
};
