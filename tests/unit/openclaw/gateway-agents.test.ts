/**
 * OpenClaw with a second agent (tests/fixtures/openclaw/gateway-agents, see PROVENANCE.md): main spawns a default
 * child and one of the read-only agent "reader", whose transcript is in reader's own store.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOpenClawStores, openClawNativeCapture, openClawParticipants, openClawTrees, readOpenClawStores } from '../../../src/harnesses/openclaw/store.js';
import { attributeCalls } from '../../../src/transforms/capture/correlate.js';
import type { Call } from '../../../src/schemas/call.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const dir = join(repoRoot, 'tests/fixtures/openclaw/gateway-agents');
const storeOf = (root: string, agent: string) => join(root, 'agents', agent, 'agent', 'openclaw-agent.sqlite');
const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));
const tmp = useTempDir('roller-openclaw-agents-');

describe('OpenClaw stores of several agents', () => {
  it("finds main's store first, then every other agent's", () => {
    expect(findOpenClawStores(dir)).toEqual([storeOf(dir, 'main'), storeOf(dir, 'reader')]);
    // A .sqlite named as such is read alone.
    expect(findOpenClawStores(storeOf(dir, 'main'))).toEqual([storeOf(dir, 'main')]);
  });

  it("the reader's child, kept in reader's store, hangs under main's root by its node's parent key", () => {
    const trees = openClawTrees(readOpenClawStores(findOpenClawStores(dir)));
    expect(trees).toHaveLength(1);
    const children = trees[0]!.children.map((c) => [c.session.key?.replace(/:[0-9a-f-]{36}$/, ':<id>'), c.depth, c.parent.key, c.session.database]);
    expect(children).toEqual(
      expect.arrayContaining([
        ['agent:main:subagent:<id>', 1, 'agent:main:main', storeOf(dir, 'main')],
        ['agent:reader:subagent:<id>', 1, 'agent:main:main', storeOf(dir, 'reader')],
      ]),
    );
    expect(children).toHaveLength(2);
  });

  it("every call is one participant's by response id; the reader's requests offer no exec, write or edit", () => {
    const tree = openClawTrees(readOpenClawStores(findOpenClawStores(dir)))[0]!;
    const people = openClawParticipants(tree);
    const attributed = attributeCalls(calls, people);
    expect(attributed.filter((c) => c.identity_status !== 'attributed')).toEqual([]);
    const reader = people.find((p) => p.native_id.startsWith('agent:reader:'))!;
    const toolsOf = (c: Call) => (((c.context as Json).tools ?? []) as Json[]).map((t) => String(t.function.name));
    const readerCalls = attributed.filter((c) => c.participant_id === reader.participant);
    expect(readerCalls.length).toBeGreaterThan(0);
    for (const c of readerCalls) expect(toolsOf(c)).not.toEqual(expect.arrayContaining(['exec']));
    for (const c of readerCalls) expect(toolsOf(c).filter((n) => ['exec', 'write', 'edit'].includes(n))).toEqual([]);
    for (const c of attributed.filter((c) => c.participant_id !== reader.participant)) expect(toolsOf(c)).toEqual(expect.arrayContaining(['exec', 'write', 'edit']));
    // Both stores are the native files the capture names.
    expect(openClawNativeCapture(tree, '2026.9.6').nativeFiles).toEqual([storeOf(dir, 'main'), storeOf(dir, 'reader')]);
  });

  it("without reader's store, its child is missing: the spawn stays unanswered, nothing is attached by guess", () => {
    const copy = join(tmp.path, 'state');
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(join(copy, 'agents', 'main', 'agent'), { recursive: true });
    copyFileSync(storeOf(dir, 'main'), storeOf(copy, 'main'));
    const tree = openClawTrees(readOpenClawStores(findOpenClawStores(copy)))[0]!;
    expect(tree.children.map((c) => c.session.key)).toEqual([expect.stringMatching(/^agent:main:subagent:/)]);
    const people = openClawParticipants(tree);
    const attributed = attributeCalls(calls, people);
    expect(attributed.filter((c) => c.identity_status !== 'attributed').length).toBeGreaterThan(0);
  });
});
