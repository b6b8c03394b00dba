import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../../src/core/errors.js';
import { piParticipants, piToActf, readPiSession } from '../../../src/harnesses/pi/session.js';
import { Actf, checkValue } from '../../../src/schemas/index.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('pi');
// The lab run of the real pi 0.73.1 (shared/lab/pi/plain): read a file, then answer.
const lab = join(repoRoot, 'tests/fixtures/pi/lab-plain/session.jsonl');

describe('Pi session (v3 entry tree)', () => {
  it('the root participant: tokens and cost from the assistant messages, responseIds as the per-id join', () => {
    const [root] = piParticipants(readPiSession(lab));
    const assistants = readFileSync(lab, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json).filter((r) => r.message?.role === 'assistant').map((r) => r.message as Json);
    expect(root).toMatchObject({ role: 'root', depth: 0, messages: 2, message_ids: ['chatcmpl-1', 'chatcmpl-2'], status: 'completed' });
    expect(root!.tokens.input).toBe(assistants.reduce((a, m) => a + m.usage.input, 0));
    expect(root!.tokens.output).toBe(assistants.reduce((a, m) => a + m.usage.output, 0));
    expect(root!.cost_usd).toBeCloseTo(assistants.reduce((a, m) => a + m.usage.cost.total, 0), 12);
  });

  it('ACTF: the read call and its result, then the answer', () => {
    const actf = piToActf(readPiSession(lab));
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(actf.steps.map((s) => [s.assistant_content.tool_calls.map((t) => t.name), s.observation.length, s.stop_reason, s.native_ids?.response_id])).toEqual([
      [['read'], 1, 'tool_calls', 'chatcmpl-1'],
      [[], 0, 'stop', 'chatcmpl-2'],
    ]);
    expect(actf.steps[0]!.user_content).toBe('Read notes.txt and summarise it.');
  });

  it('only the active branch counts: an abandoned turn (an entry whose branch a later entry left) is not read', () => {
    const file = join(tmp.path, 'branched.jsonl');
    const records = readFileSync(lab, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    // Re-parent the last assistant message onto the user message: the first assistant turn is now off the branch.
    const user = records.find((r) => r.message?.role === 'user')!;
    const last = records.at(-1)!;
    last.parentId = user.id;
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const [root] = piParticipants(readPiSession(file));
    expect(root!.message_ids).toEqual([last.message.responseId]);
  });

  it('a cut last line is dropped; an unknown header version is a clear error with file and line', () => {
    const cut = join(tmp.path, 'cut.jsonl');
    copyFileSync(lab, cut);
    appendFileSync(cut, '{"type":"message","id":"x","parentId":');
    expect(readPiSession(cut).messages).toHaveLength(readPiSession(lab).messages.length);
    const v4 = join(tmp.path, 'v4.jsonl');
    writeFileSync(v4, readFileSync(lab, 'utf8').replace('"version":3', '"version":4'));
    const err = (() => {
      try {
        readPiSession(v4);
      } catch (e) {
        return e;
      }
    })();
    expect(isRollerError(err)).toBe(true);
    expect((err as Error).message).toContain(`${v4}:1: not a Pi session header of format 1, 2 or 3`);
  });
});

describe('a session Pi compacted (real pi 0.73.1, tests/fixtures/pi/compacted-0.73.1)', () => {
  it('ACTF holds every turn; no linear SFT, saying why (the model never saw the turns at once after the compaction)', async () => {
    const { convertNative } = await import('../../../src/pipelines/convert.js');
    const native = join(repoRoot, 'tests/fixtures/pi/compacted-0.73.1/native');
    const file = join(native, '.pi/agent/sessions/--work--/session.jsonl');
    const compactions = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>).filter((e) => e.type === 'compaction');
    expect(compactions.length).toBe(2);
    const [s] = await convertNative({ harness: 'pi', native, out: join(tmp.path, 'compacted'), keepThinking: true });
    expect(s!.actf.steps.length).toBeGreaterThan(3);
    expect(s!.sft).toEqual({ status: 'unavailable', reason: `the main context was compacted 2 time(s) (compaction entries ${compactions.map((c) => c.id).join(', ')}): a linear SFT would join windows the model never saw at once, and roller rebuilds compaction segments for Claude Code only so far` });
  });
});
