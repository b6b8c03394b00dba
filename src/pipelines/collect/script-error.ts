import type { Call } from '../../schemas/call.js';
import { SCRIPT_ERROR_PREFIX } from '../../sources/scripted-model/respond.js';
import { wireProtocol } from '../../transforms/protocols/index.js';

/**
 * The first reply in which roller's embedded scripted model says it could not follow its script (a tool the
 * scenario needs was not offered): a sample with one is no data, whatever the harness made of the reply. Calls no
 * native message holds (`auxiliary`: OpenCode's title requests, which offer no tools) are not the agent's turns.
 */
export function scriptErrorOf(calls: readonly Call[], auxiliary?: { test(call: Call): boolean }): string | undefined {
  for (const call of calls) {
    if (auxiliary?.test(call)) continue;
    const output = call.output as Record<string, unknown> | null;
    const text = output ? (wireProtocol(call.protocol)?.outputText(output) ?? '') : '';
    if (text.startsWith(SCRIPT_ERROR_PREFIX)) return text;
  }
  return undefined;
}
