/**
 * OpenClaw Gateway runs: a real store (tests/fixtures/openclaw/gateway-spawn, see PROVENANCE.md) with a root
 * session and the sessions_spawn child it ran, and the calls the proxy recorded for it.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openClawNativeCapture, openClawParticipants, openClawTrees, readOpenClawStore } from '../../../src/harnesses/openclaw/store.js';
import { attributeCalls } from '../../../src/transforms/capture/correlate.js';
import { deliveryIn, deriveRelations } from '../../../src/transforms/capture/relations.js';
import { openClawDelivery } from '../../../src/harnesses/openclaw/delivery.js';
import type { Call } from '../../../src/schemas/call.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const dir = join(repoRoot, 'tests/fixtures/openclaw/gateway-spawn');
const store = join(dir, 'openclaw-agent.sqlite');
// Attribution is recomputed from the store: the recorded participant ids are dropped.
const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));
const tmp = useTempDir('roller-openclaw-store-');

describe('OpenClaw Gateway store: a root session and its sessions_spawn child', () => {
  const trees = openClawTrees(readOpenClawStore(store));

  it('the child session hangs under the root by its node’s parent key, not as a second root', () => {
    expect(trees).toHaveLength(1);
    expect(trees[0]!.root.key).toBe('agent:main:main');
    expect(trees[0]!.children.map((c) => [c.session.key, c.depth, c.parent.key])).toEqual([[expect.stringMatching(/^agent:main:subagent:/), 1, 'agent:main:main']]);
  });

  it('the child participant: its session key as native id, the spawn tool call from the parent’s accepted result, its response ids', () => {
    const [root, child] = openClawParticipants(trees[0]!);
    const spawn = trees[0]!.root.spawns[0]!;
    expect(spawn).toMatchObject({ accepted: true, childSessionKey: child!.native_id });
    expect(root).toMatchObject({ role: 'root', parent: null, messages: 3, status: 'completed', spawn_result: null });
    expect(child).toMatchObject({ role: 'child', parent: root!.participant, spawn_tool_call_id: spawn.toolCallId, depth: 1, messages: 2, status: 'completed', spawn_result: 'acknowledgement' });
    expect(child!.message_ids).toHaveLength(2);
    // Every captured call is exactly one participant's output, by response id.
    const attributed = attributeCalls(calls, [root!, child!]);
    expect(attributed.map((c) => c.participant_id)).toEqual([root, root, child, child, root].map((p) => p!.participant));
  });

  it('per-id coverage when every output keeps its response id', () => {
    expect(openClawNativeCapture(trees[0]!, '2026.9.6')).toMatchObject({ outputs: { method: 'per_id' }, capabilities: { native_output_coverage: 'per_id', delegation: 'native' } });
  });

  it('relations: the acknowledgement is no delivery; the completion event naming the child’s session key is', () => {
    const people = openClawParticipants(trees[0]!);
    const attributed = attributeCalls(calls, people);
    const child = people[1]!;
    expect(attributed.map((c) => deliveryIn(c, child, openClawDelivery))).toEqual([false, false, false, false, true]);
    // Another child's key in the same event is no evidence for this one.
    expect(deliveryIn(attributed[4]!, { ...child, native_id: 'agent:main:subagent:00000000-0000-0000-0000-000000000000' }, openClawDelivery)).toBe(false);
    const relations = deriveRelations({ calls: attributed, participants: people, scope: 'test', delivery: openClawDelivery });
    expect(relations.map((r) => [r.type, r.parent_call_id, r.in_call_id, r.status])).toEqual([
      ['spawn', calls[0]!.call_id, null, 'established'],
      ['child_completed', calls[0]!.call_id, null, 'established'],
      ['launch_acknowledged', calls[0]!.call_id, null, 'established'],
      // The wire sends the spawn's id back rewritten (call_X -> callX): still the same tool call.
      ['launch_ack_in_context', calls[0]!.call_id, calls[1]!.call_id, 'established'],
      ['launch_ack_in_context', calls[0]!.call_id, calls[4]!.call_id, 'established'],
      ['result_delivered', calls[0]!.call_id, null, 'established'],
      ['result_in_context', calls[0]!.call_id, calls[4]!.call_id, 'established'],
    ]);
  });

  it('a child whose parent is not in the store stays a root of its own (reported as several roots), never attached by guess', () => {
    const copy = join(tmp.path, 'orphan.sqlite');
    copyFileSync(store, copy);
    const db = new Database(copy);
    db.prepare("update session_nodes set parent_session_key = 'agent:main:elsewhere' where parent_session_key is not null").run();
    db.close();
    const orphan = openClawTrees(readOpenClawStore(copy));
    expect(orphan).toHaveLength(2);
    expect(orphan.every((t) => t.children.length === 0)).toBe(true);
  });

  it('a store without session_nodes (older shapes, exec) reads as roots with no keys', () => {
    const copy = join(tmp.path, 'no-nodes.sqlite');
    copyFileSync(store, copy);
    const db = new Database(copy);
    db.exec('drop table session_nodes');
    db.close();
    const sessions = readOpenClawStore(copy);
    expect(sessions.map((s) => [s.key, s.parentKey])).toEqual([
      [null, null],
      [null, null],
    ]);
  });
});

describe('OpenClaw exec runs without response ids: one participant, joined by its dedicated proxy and counted', () => {
  it('falls back to count coverage and the sole-participant evidence', () => {
    const copy = join(tmp.path, 'no-ids.sqlite');
    copyFileSync(store, copy);
    const db = new Database(copy);
    for (const r of db.prepare('select rowid, event_json from transcript_events').all() as Json[]) {
      const e = JSON.parse(String(r.event_json)) as Json;
      if (e.message?.responseId) delete e.message.responseId;
      db.prepare('update transcript_events set event_json = ? where rowid = ?').run(JSON.stringify(e), r.rowid);
    }
    db.exec('drop table session_nodes');
    db.close();
    const trees = openClawTrees(readOpenClawStore(copy));
    const root = trees.find((t) => t.root.spawns.length > 0)!;
    const native = openClawNativeCapture(root, '2026.9.6');
    expect(native.outputs).toEqual({ method: 'count', counts: { [native.participants[0]!.participant]: 3 } });
    expect(native.soleParticipant?.participant).toBe(native.participants[0]!.participant);
  });
});
