import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, RollerError } from '../../../src/core/errors.js';
import { codexParticipants } from '../../../src/harnesses/codex/participants.js';
import { threadOfRecords, type RolloutRecord } from '../../../src/harnesses/codex/rollout.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import type { Call } from '../../../src/schemas/call.js';
import { useTempDir } from '../../support/temp-dir.js';

/**
 * Codex rollouts of the version matrix (tests/fixtures/versions/codex: real CLIs on the scripted model), read as
 * the releases wrote them — and, where a test needs a shape no release wrote, a copy of one changed in one place.
 */
const VERSIONS = join(import.meta.dirname, '..', '..', 'fixtures', 'versions', 'codex');
const tmp = useTempDir('codex-versions');

type Json = Record<string, any>;

const rollouts = (dir: string) =>
  readdirSync(join(dir, 'native'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
const recordsOf = (file: string): RolloutRecord[] => lines(file).map((record, i) => ({ record, file: file.split('/').at(-1)!, line: i + 1 }));
const callsOf = (dir: string) => readFileSync(join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);

/** A copy of a fixture's native dir, each rollout passed through `edit` (its lines as records). */
async function edited(dir: string, name: string, edit: (records: Json[], file: string) => Json[]): Promise<string> {
  const out = join(tmp.path, name);
  await cp(join(dir, 'native'), out, { recursive: true });
  for (const f of rollouts(dir)) {
    const target = join(out, f.slice(join(dir, 'native').length));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, `${edit(lines(f), f).map((r) => JSON.stringify(r)).join('\n')}\n`);
  }
  return out;
}

/** What the server sent each thread, by the identity header that names it. */
function sentByThread(calls: readonly Call[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of calls) {
    const id = c.native_identity.thread_id ?? c.native_identity.session_id;
    if (id && c.usage.normalized) out.set(id, (out.get(id) ?? 0) + c.usage.normalized.output);
  }
  return out;
}

describe('Codex across releases', () => {
  const fork = join(VERSIONS, '0.150.0', 'a-single-sub-agent-multi_agent-v2-warm-fork');

  it('0.150 (token_count only, SubAgentActivity, a warm fork): exact tokens per thread, the status from the parent, the replay not counted', async () => {
    const sessions = await convertNative({ harness: 'codex', native: join(fork, 'native'), out: join(tmp.path, 'fork'), keepThinking: true });
    const participants = sessions[0]!.participants;
    expect(participants).toHaveLength(2);
    const sent = sentByThread(callsOf(fork));
    for (const p of participants) {
      expect(p.tokens.output, p.participant).toBe(sent.get(p.native_id));
      expect(p.tokens_note).toMatch(/token_count/);
      expect(p.tokens.input + p.tokens.cache_read).toBeGreaterThan(0);
    }
    const child = participants.find((p) => p.role === 'child')!;
    expect(child.status).toBe('completed');
    expect(child.status_source).toMatch(/#SubAgentActivity\.completed$/);
    // seeds/004: a Codex status is the last observed turn; the fork's replayed parent records are counted as skipped.
    expect(participants.map((p) => p.status_meaning)).toEqual(['last_observed_turn', 'last_observed_turn']);
    const childFile = readdirSync(join(fork, 'native'), { recursive: true }).map(String).find((f) => f.endsWith('.jsonl') && f.includes(child.native_id))!;
    const lines = readFileSync(join(fork, 'native', childFile), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; ordinal?: number; payload?: { subagent_history_start_ordinal?: number } });
    const start = lines.find((l) => l.type === 'session_meta')!.payload!.subagent_history_start_ordinal!;
    const replayed = lines.filter((l, i) => i > 0 && typeof l.ordinal === 'number' && l.ordinal < start).length;
    expect(replayed).toBeGreaterThan(0);
    expect(child.replayed_records_skipped).toBe(replayed);
    expect(participants.find((p) => p.role === 'root')!.replayed_records_skipped).toBeUndefined();
  });

  it('0.130 (a v2 warm fork with no history ordinal): the replay ends at the fork\'s own first turn; read without its parent, its tokens are unknown', async () => {
    const dir = join(VERSIONS, '0.130.0', 'a-single-sub-agent-multi_agent-v2-warm-fork');
    const sent = sentByThread(callsOf(dir));
    const [s] = await convertNative({ harness: 'codex', native: join(dir, 'native'), out: join(tmp.path, 'fork-130'), keepThinking: true });
    const child = s!.participants.find((p) => p.role === 'child')!;
    expect(child.tokens.output).toBe(sent.get(child.native_id));
    // The parent's session_meta and its first turn, replayed before the fork's own task_started.
    expect(child.replayed_records_skipped).toBe(9);
    const childFile = readdirSync(join(dir, 'native'), { recursive: true }).map(String).find((f) => f.endsWith('.jsonl') && f.includes(child.native_id))!;
    const [alone] = await convertNative({ harness: 'codex', native: join(dir, 'native', childFile), out: join(tmp.path, 'fork-130-alone'), keepThinking: true });
    const orphan = alone!.participants.find((p) => p.native_id === child.native_id)!;
    expect(orphan.tokens_status).toBe('unknown');
    expect(orphan.tokens_note).toMatch(/replays thread .* history from line 2, and that thread's rollout was not read/);
  });

  it("a forked child's replayed token counts are the parent's: a copy of the parent's token_count in the replay changes nothing", async () => {
    const parentFile = rollouts(fork).find((f) => lines(f).filter((r) => r.type === 'session_meta').length === 1)!;
    const parentCount = lines(parentFile).find((r) => r.type === 'event_msg' && r.payload?.type === 'token_count' && r.payload.info)!;
    const native = await edited(fork, 'fork-replayed-count', (records, file) => {
      if (file === parentFile) return records;
      // Into the replayed prefix (below subagent_history_start_ordinal), as a fork of a later parent turn would hold it.
      const at = records.findIndex((r) => r.type === 'turn_context');
      return [...records.slice(0, at), { ...parentCount, ordinal: records[at]!.ordinal }, ...records.slice(at)];
    });
    const before = (await convertNative({ harness: 'codex', native: join(fork, 'native'), out: join(tmp.path, 'f1'), keepThinking: true }))[0]!.participants;
    const after = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 'f2'), keepThinking: true }))[0]!.participants;
    expect(after.map((p) => p.tokens)).toEqual(before.map((p) => p.tokens));
  });

  it("status precedence (seeds/004): the parent's last SubAgentActivity outranks the child's own last turn", () => {
    const [a, b] = rollouts(fork).map(recordsOf);
    const interrupted = (rs: RolloutRecord[]) =>
      rs.map((r) => (r.record.payload?.item?.type === 'SubAgentActivity' && r.record.payload.item.kind === 'completed' ? { ...r, record: { ...r.record, payload: { ...r.record.payload, item: { ...r.record.payload.item, kind: 'interrupted' } } } } : r));
    const threads = [threadOfRecords(interrupted(a!), 'a.jsonl'), threadOfRecords(interrupted(b!), 'b.jsonl')];
    const child = codexParticipants(threads).find((p) => p.role === 'child')!;
    expect(child.status).toBe('failed');
    expect(child.status_source).toMatch(/SubAgentActivity\.interrupted/);
    // Without any activity for it in the parent: the child's own last task_complete.
    const without = (rs: RolloutRecord[]) => rs.filter((r) => r.record.payload?.item?.type !== 'SubAgentActivity');
    const own = codexParticipants([threadOfRecords(without(a!), 'a.jsonl'), threadOfRecords(without(b!), 'b.jsonl')]).find((p) => p.role === 'child')!;
    expect(own.status).toBe('completed');
    expect(own.status_source).toMatch(/#task_complete$/);
  });

  it('a token_count without last_token_usage is read from the growth of total_token_usage (the same counts), and said in conversion.json', async () => {
    const native = await edited(fork, 'no-last-usage', (records) =>
      records.map((r) => (r.type === 'event_msg' && r.payload?.type === 'token_count' && r.payload.info ? { ...r, payload: { ...r.payload, info: { ...r.payload.info, last_token_usage: undefined } } } : r)),
    );
    const whole = (await convertNative({ harness: 'codex', native: join(fork, 'native'), out: join(tmp.path, 'w'), keepThinking: true }))[0]!;
    const read = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 'l'), keepThinking: true }))[0]!;
    expect(read.participants.map((p) => [p.tokens, p.tokens_status])).toEqual(whole.participants.map((p) => [p.tokens, p.tokens_status]));
    const conversion = JSON.parse(await readFile(join(tmp.path, 'l', 'conversion.json'), 'utf8')) as Json;
    expect(conversion.read_notes.length).toBeGreaterThan(0);
    for (const note of conversion.read_notes) expect(note).toMatch(/^sessions\/.*rollout-.*\.jsonl:\d+: token_count without last_token_usage: its response's count is what total_token_usage grew by/);
    // The rollouts as written need no note: conversion.json as before.
    expect((JSON.parse(await readFile(join(tmp.path, 'w', 'conversion.json'), 'utf8')) as Json).read_notes).toBeUndefined();
  });

  it('a token_count without total_token_usage: tokens unknown (a repeat cannot be told), exact from the capture; without either count, refused', async () => {
    const drop = (field: string) => (records: Json[]) =>
      records.map((r) => (r.type === 'event_msg' && r.payload?.type === 'token_count' && r.payload.info ? { ...r, payload: { ...r.payload, info: { ...r.payload.info, [field]: undefined, ...(field === 'both' ? { total_token_usage: undefined, last_token_usage: undefined } : {}) } } } : r));
    const native = await edited(fork, 'no-total-usage', drop('total_token_usage'));
    const alone = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 't1'), keepThinking: true }))[0]!;
    for (const p of alone.participants) {
      expect(p.tokens_status, p.participant).toBe('unknown');
      expect(p.tokens_note).toMatch(/token_count record without total_token_usage.*unknown, not guessed/);
    }
    const wired = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 't2'), keepThinking: true, calls: callsOf(fork) }))[0]!;
    expect(wired.participants.map((p) => p.tokens_status)).toEqual(wired.participants.map(() => 'exact'));
    const neither = await edited(fork, 'no-counts', drop('both'));
    const err = await convertNative({ harness: 'codex', native: neither, out: join(tmp.path, 't3'), keepThinking: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RollerError);
    expect((err as RollerError).code).toBe(ErrorCode.NATIVE_SHAPE_UNKNOWN);
    expect((err as RollerError).message).toMatch(/token_count\) has neither total_token_usage nor last_token_usage/);
  });

  it('a rollout whose token records are gone: tokens unknown (never zero), and exact again from the capture', async () => {
    const native = await edited(fork, 'no-token-records', (records) => records.filter((r) => !(r.type === 'event_msg' && r.payload?.type === 'token_count')));
    const alone = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 'n1'), keepThinking: true }))[0]!;
    for (const p of alone.participants) {
      expect(p.tokens_status, p.participant).toBe('unknown');
      expect(p.tokens_note).toMatch(/no token_count.*unknown, not zero/);
    }
    const usage = JSON.parse(await readFile(join(tmp.path, 'n1', 'usage.json'), 'utf8')) as Json;
    expect(usage.partial.tokens_unknown).toEqual(alone.participants.map((p) => p.participant));
    const calls = callsOf(fork);
    const wired = (await convertNative({ harness: 'codex', native, out: join(tmp.path, 'n2'), keepThinking: true, calls }))[0]!;
    const sent = sentByThread(calls);
    for (const p of wired.participants) {
      expect(p.tokens_status).toBe('exact');
      expect(p.tokens.output).toBe(sent.get(p.native_id));
      expect(p.tokens_note).toMatch(/counted from the capture/);
    }
  });

  it('the pre-0.34 shape (a header line, bare items, no token counts): read, its tokens unknown alone and exact from the capture', async () => {
    const dir = join(VERSIONS, '0.20.0', 'a-tool-call');
    const alone = (await convertNative({ harness: 'codex', native: join(dir, 'native'), out: join(tmp.path, 'l1'), keepThinking: true }))[0]!;
    expect(alone.steps).toBeGreaterThan(0);
    expect(alone.participants[0]!.tokens_status).toBe('unknown');
    expect(alone.participants[0]!.tokens_note).toMatch(/before 0\.34/);
    // trace.jsonl keeps the lines as the CLI wrote them.
    const trace = (await readFile(join(tmp.path, 'l1', 'trace.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    expect(trace).toEqual(lines(rollouts(dir)[0]!));
    const calls = callsOf(dir);
    const wired = (await convertNative({ harness: 'codex', native: join(dir, 'native'), out: join(tmp.path, 'l2'), keepThinking: true, calls }))[0]!;
    expect(wired.participants[0]!.tokens.output).toBe(calls.reduce((n, c) => n + (c.usage.normalized?.output ?? 0), 0));
  });

  it('a record type no release wrote fails loudly: file, line, type, producer version and what roller was verified against', async () => {
    const dir = join(VERSIONS, '0.171.0', 'a-tool-call');
    const native = await edited(dir, 'unknown-type', (records) => [...records.slice(0, 3), { timestamp: records[2]!.timestamp, type: 'turn_replay_marker', payload: {} }, ...records.slice(3)]);
    const err = await convertNative({ harness: 'codex', native, out: join(tmp.path, 'u'), keepThinking: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RollerError);
    expect((err as RollerError).code).toBe(ErrorCode.NATIVE_SHAPE_UNKNOWN);
    expect((err as Error).message).toMatch(/rollout-[^:]+\.jsonl:4: a 'turn_replay_marker' record of a type no verified release wrote \(written by Codex 0\.171\.0\); roller reads the rollouts of Codex/);
  });
});
