import { readdirSync, readFileSync } from 'node:fs';
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, RollerError } from '../../../src/core/errors.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import type { Call } from '../../../src/schemas/call.js';
import { useTempDir } from '../../support/temp-dir.js';

/** Claude Code session files of the version matrix (tests/fixtures/versions/claude-code: real CLIs on the scripted model). */
const VERSIONS = join(import.meta.dirname, '..', '..', 'fixtures', 'versions', 'claude-code');
const tmp = useTempDir('cc-versions');

type Json = Record<string, any>;

const mainFile = (dir: string) => {
  const project = readdirSync(join(dir, 'native', 'projects'))[0]!;
  const name = readdirSync(join(dir, 'native', 'projects', project)).find((f) => f.endsWith('.jsonl'))!;
  return { project, name, path: join(dir, 'native', 'projects', project, name) };
};
const callsOf = (dir: string) => readFileSync(join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);

describe('Claude Code across releases', () => {
  it('2.1.20 to 2.1.50 wrote only the stream-start usage snapshot: output unknown alone (never the snapshot), exact with the capture', async () => {
    const dir = join(VERSIONS, '2.1.36', 'a-tool-call');
    const alone = (await convertNative({ harness: 'claude-code', native: join(dir, 'native'), out: join(tmp.path, 's1'), keepThinking: true }))[0]!;
    const root = alone.participants[0]!;
    expect(root.tokens_status).toBe('unknown');
    expect(root.tokens_note).toMatch(/start snapshot \(no stop_reason\).*unknown, not zero/);
    const calls = callsOf(dir);
    const wired = (await convertNative({ harness: 'claude-code', native: join(dir, 'native'), out: join(tmp.path, 's2'), keepThinking: true, calls }))[0]!.participants[0]!;
    expect(wired.tokens_status).toBe('exact');
    expect(wired.tokens.output).toBe(calls.filter((c) => c.response_id && root.message_ids.includes(c.response_id)).reduce((n, c) => n + c.usage.normalized!.output, 0));
  });

  it('2.0.30 to 2.1.0 kept sub-agents in sibling agent-<id>.jsonl files: each is its own participant, linked by toolUseResult.agentId', async () => {
    const dir = join(VERSIONS, '2.0.50', 'a-single-sub-agent');
    const participants = (await convertNative({ harness: 'claude-code', native: join(dir, 'native'), out: join(tmp.path, 'sib'), keepThinking: true }))[0]!.participants;
    const spawned = participants.filter((p) => p.role === 'child' && p.spawn_tool_call_id !== null);
    expect(spawned).toHaveLength(1);
    expect(spawned[0]!.parent).toBe(participants[0]!.participant);
    expect(spawned[0]!.tokens.output).toBeGreaterThan(0);
    // The CLI's own warm-up agents (no tool call spawned them) are participants too, their parent unknown, never guessed.
    for (const warm of participants.filter((p) => p.role === 'child' && p.spawn_tool_call_id === null)) expect(warm.parent).toBeNull();
  });

  it('before 2.0.30 sub-agents were inline sidechains: their turns are not the main thread\'s', async () => {
    const dir = join(VERSIONS, '2.0.20', 'a-single-sub-agent');
    const participants = (await convertNative({ harness: 'claude-code', native: join(dir, 'native'), out: join(tmp.path, 'inline'), keepThinking: true }))[0]!.participants;
    const chains = participants.filter((p) => p.participant.startsWith('sidechain:'));
    expect(chains.length).toBeGreaterThan(0);
    const main = readFileSync(mainFile(dir).path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    const sideIds = new Set(main.filter((r) => r.isSidechain === true && r.type === 'assistant').map((r) => r.message.id));
    expect(participants[0]!.message_ids.some((id) => sideIds.has(id))).toBe(false);
    expect(chains.flatMap((c) => c.message_ids).sort()).toEqual([...sideIds].sort());
  });

  it('roller usage (the fast scan) counts every release of the matrix as convert does: participants, tokens, unknowns', async () => {
    const { scanUsage } = await import('../../../src/harnesses/claude-code/usage-scan.js');
    for (const version of readdirSync(VERSIONS)) {
      for (const scenario of readdirSync(join(VERSIONS, version))) {
        const native = join(VERSIONS, version, scenario, 'native');
        const scan = await scanUsage(native);
        const [s] = await convertNative({ harness: 'claude-code', native, out: join(tmp.path, 'scan', version, scenario), keepThinking: true });
        const converted = s!.participants.filter((p) => p.status !== 'missing' && p.messages > 0);
        const scanned = scan.participants.filter((p) => !p.missing && p.messages > 0);
        const where = `${version}/${scenario}`;
        expect(scanned.map((p) => p.participant).sort(), where).toEqual(converted.map((p) => p.participant).sort());
        for (const p of converted) {
          const q = scanned.find((x) => x.participant === p.participant)!;
          expect(q.tokens, `${where} ${p.participant}`).toEqual(p.tokens);
          expect(q.tokens_unknown !== undefined, `${where} ${p.participant} unknown`).toBe(p.tokens_status === 'unknown');
        }
      }
    }
  }, 120_000);

  it('a record type no release wrote fails loudly: file, line, type and the version on the record', async () => {
    const dir = join(VERSIONS, '2.1.332', 'a-tool-call');
    const native = join(tmp.path, 'unknown');
    await cp(join(dir, 'native'), native, { recursive: true });
    const { project, name, path } = mainFile(dir);
    const records = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    records.splice(2, 0, JSON.stringify({ type: 'branch-merge', version: '2.1.400', sessionId: name.replace('.jsonl', '') }));
    await writeFile(join(native, 'projects', project, name), `${records.join('\n')}\n`);
    const err = await convertNative({ harness: 'claude-code', native, out: join(tmp.path, 'u'), keepThinking: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RollerError);
    expect((err as RollerError).code).toBe(ErrorCode.NATIVE_SHAPE_UNKNOWN);
    expect((err as Error).message).toContain(`${name}:3: a 'branch-merge' record of a type no verified release wrote (written by Claude Code 2.1.400)`);
    expect((err as Error).message).toContain('roller verify --harness claude-code --versions 2.1.400 --record');
  });
});
