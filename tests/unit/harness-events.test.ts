/**
 * Hermes cannot be installed here: its adapter reads an event schema roller defines (roller.hermes-events/v1).
 * Golden tests on a fixture written in that shape, with a batched delegate_task that spawned two children and a
 * compression chain. (DeepSeek's dsh installs and runs: tests/unit/deepseek, on real runs.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../src/core/errors.js';
import { hermesParticipants } from '../../src/harnesses/hermes/participants.js';
import { readHermes } from '../../src/harnesses/hermes/store.js';
import { convertNative } from '../../src/pipelines/convert.js';
import { Actf, checkValue, HermesEvent, SftRecord } from '../../src/schemas/index.js';
import { expectGolden, stableJson } from '../support/golden.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('harness-events');
const hermesFixture = join(repoRoot, 'tests/fixtures/hermes/delegation.events.jsonl');
const golden = (name: string) => join(repoRoot, 'tests/golden', name);

/** The same rows as a Hermes state.db (its sessions and messages tables), built with SQLite. */
function hermesDb(path: string): void {
  const rows = readFileSync(hermesFixture, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
  const db = new Database(path);
  db.exec(`create table sessions (id text primary key, source text, model text, parent_session_id text, started_at real, ended_at real, end_reason text,
    input_tokens integer, output_tokens integer, cache_read_tokens integer, cache_write_tokens integer, reasoning_tokens integer, estimated_cost_usd real, system_prompt text);
    create table messages (id integer primary key autoincrement, session_id text, role text, content text, tool_calls text, tool_call_id text, tool_name text,
    reasoning text, reasoning_content text, finish_reason text, timestamp real, active integer default 1);`);
  for (const r of rows) {
    const row = (r.session ?? r.message) as Json;
    const cols = Object.keys(row);
    db.prepare(`insert into ${r.kind === 'session' ? 'sessions' : 'messages'} (${cols.join(',')}) values (${cols.map(() => '?').join(',')})`).run(...cols.map((c) => row[c] ?? null));
  }
  db.close();
}

describe('Hermes (roller.hermes-events/v1 and state.db)', () => {
  it('every fixture line is a valid roller.hermes-events/v1 event', () => {
    for (const l of readFileSync(hermesFixture, 'utf8').trim().split('\n')) expect(checkValue(HermesEvent, JSON.parse(l))).toEqual([]);
  });

  it('a batched delegate_task spawned two children; a compression chain stays the root participant; superseded rows are dropped', () => {
    const { participants } = hermesParticipants(readHermes(hermesFixture));
    expect(participants.map((p) => [p.participant, p.role, p.parent, p.spawn_tool_call_id, p.depth, p.messages, p.status])).toEqual([
      ['session:hs-root-0001', 'root', null, null, 0, 3, 'completed'],
      ['session:hs-child-a', 'child', 'session:hs-root-0001', 'call_delegate_1', 1, 2, 'completed'],
      ['session:hs-child-b', 'child', 'session:hs-root-0001', 'call_delegate_1', 1, 2, 'completed'],
    ]);
    // Root tokens: the root session and its compression continuation, each counted once.
    expect(participants[0]!.tokens).toEqual({ input: 1700, cache_creation: 0, cache_read: 400, output: 130, reasoning: 12 });
  });

  it('a state.db with the same rows (read with SQLite) gives the same data', () => {
    const db = join(tmp.path, 'state.db');
    hermesDb(db);
    const a = readHermes(hermesFixture);
    const b = readHermes(db);
    expect(b.sessions.map((s) => s.id)).toEqual(a.sessions.map((s) => s.id));
    expect(b.messages.map((m) => [m.id, m.role, m.tool_calls.map((c) => c.id)])).toEqual(a.messages.map((m) => [m.id, m.role, m.tool_calls.map((c) => c.id)]));
  });

  it('golden: trace, ACTF (root only, continuation included, no child step) and SFT', async () => {
    const out = join(tmp.path, 'hermes');
    const [s] = await convertNative({ harness: 'hermes', native: hermesFixture, out, keepThinking: true });
    const actf = JSON.parse(readFileSync(join(out, 'trace_ACTF.json'), 'utf8')) as Actf;
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(actf.steps.map((x) => x.native_ids?.message_id)).toEqual(['102', '113', '115']);
    expect(s!.sft.status).toBe('ok');
    expect(checkValue(SftRecord, JSON.parse(readFileSync(join(out, 'trace_SFT.json'), 'utf8')))).toEqual([]);
    await expectGolden(golden('hermes/trace_ACTF.json'), stableJson(actf));
    await expectGolden(golden('hermes/trace_SFT.json'), stableJson(JSON.parse(readFileSync(join(out, 'trace_SFT.json'), 'utf8'))));
    expect(readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n')).toHaveLength(18); // 19 rows, one superseded
  });

  it('an unknown shape is an error naming the line', () => {
    const bad = join(tmp.path, 'bad.events.jsonl');
    writeFileSync(bad, JSON.stringify({ schema: 'roller.hermes-events/v1', kind: 'message', message: { id: 1, session_id: 's', role: 'robot', timestamp: 1 } }) + '\n');
    const err = (() => {
      try {
        readHermes(bad);
      } catch (e) {
        return e;
      }
    })();
    expect(isRollerError(err)).toBe(true);
    expect((err as Error).message).toContain(`${bad}:1:`);
  });
});

