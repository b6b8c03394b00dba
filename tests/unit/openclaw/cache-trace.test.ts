/**
 * OpenClaw's cache trace as native evidence (seeds/000 A5.3, A9.12, A6.5): a real Gateway run with a child
 * (tests/fixtures/openclaw/gateway-cache-trace, see PROVENANCE.md). The completion event reaches the parent as an
 * announcement run; the transcript does not keep it.
 */
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openClawDelivery } from '../../../src/harnesses/openclaw/delivery.js';
import { announcedRunOf, cacheTraceBeside, isAnnouncementRun, readOpenClawCacheTrace, settledRunsOf } from '../../../src/harnesses/openclaw/cache-trace.js';
import { findOpenClawStores, openClawAnnouncements, openClawNativeCapture, openClawParticipants, openClawSftBlocker, openClawToActf, openClawTrees, readOpenClawStore, readOpenClawStores } from '../../../src/harnesses/openclaw/store.js';
import { attributeCalls } from '../../../src/transforms/capture/correlate.js';
import { deriveRelations } from '../../../src/transforms/capture/relations.js';
import type { Call } from '../../../src/schemas/call.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

const dir = join(repoRoot, 'tests/fixtures/openclaw/gateway-cache-trace');
const store = join(dir, 'state/agents/main/agent/openclaw-agent.sqlite');
const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));
const tmp = useTempDir('roller-openclaw-cache-trace-');

describe('OpenClaw cache trace: announcement runs bind a child’s delivery and give back the input the transcript lacks', () => {
  const tree = openClawTrees(readOpenClawStore(store))[0]!;
  const trace = readOpenClawCacheTrace(cacheTraceBeside(store)!);
  const people = openClawParticipants(tree);
  const child = people[1]!;

  it('reads the runs: the root turn, the child run, and the announcement run naming both the child key and its run', () => {
    expect(trace.unreadable).toBe(0);
    const announce = [...trace.runs.values()].find((r) => isAnnouncementRun(r.runId))!;
    const childRun = announcedRunOf(announce.runId, child.native_id!)!;
    expect(trace.runs.get(childRun)?.sessionKey).toBe(child.native_id);
    expect(announcedRunOf(announce.runId, 'agent:main:subagent:other')).toBeNull();
    expect(announce.sessionId).toBe(tree.root.transcript.id);
    expect(announce.replies).toEqual([calls[4]!.response_id]);
  });

  it('the relation is established only in the announcement run’s reply, with the run as evidence', () => {
    const native = openClawNativeCapture(tree, '2026.9.6', trace);
    expect(native.nativeFiles).toEqual([store, cacheTraceBeside(store)]);
    const attributed = attributeCalls(calls, people);
    const relations = deriveRelations({ calls: attributed, participants: people, scope: 'test', announcements: native.announcements!, delivery: openClawDelivery });
    const delivered = relations.filter((r) => r.type === 'result_delivered' || r.type === 'result_in_context');
    expect(delivered.map((r) => [r.type, r.in_call_id, r.status])).toEqual([
      ['result_delivered', null, 'established'],
      ['result_in_context', calls[4]!.call_id, 'established'],
    ]);
    expect(delivered[1]!.evidence).toEqual([
      { source: 'calls.jsonl', event_id: calls[4]!.call_id, retained: true },
      { source: 'logs/cache-trace.jsonl', event_id: native.announcements!.runs[child.native_id]!.runId, retained: true },
    ]);
    // The same text in a call that is not the run's reply is no proof.
    const elsewhere = { ...native.announcements!, runs: { [child.native_id]: { runId: 'announce:v1:x:y', responseIds: ['chatcmpl-other'] } } };
    const unbound = deriveRelations({ calls: attributed, participants: people, scope: 'test', announcements: elsewhere, delivery: openClawDelivery }).filter((r) => r.type === 'result_in_context');
    expect(unbound.map((r) => [r.status, r.reason])).toEqual([['unknown', expect.stringContaining('not a reply of the announcement run announce:v1:x:y')]]);
    // No trace: nothing names the child's announcement run.
    const none = deriveRelations({ calls: attributed, participants: people, scope: 'test', announcements: { source: 'logs/cache-trace.jsonl', runs: {} }, delivery: openClawDelivery }).filter((r) => r.type === 'result_in_context');
    expect(none.map((r) => r.status)).toEqual(['unknown']);
  });

  it('the root ACTF gets the completion event back as the input of the reply it led to; without the trace, SFT is barred', () => {
    const rootCalls = attributeCalls(calls, people).filter((c) => c.participant_id === people[0]!.participant);
    const bare = openClawToActf(tree.root, { wire: rootCalls });
    expect(bare.steps.at(-1)!.user_content).toBeNull();
    const actf = openClawToActf(tree.root, { wire: rootCalls, trace });
    const last = actf.steps.at(-1)!;
    expect(last.user_content).toContain(`session_key: ${child.native_id}`);
    expect(last.user_content).toContain('<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>');
    // Word for word what the reply's request carried as its last user messages.
    const sent = (calls[4]!.context as { messages: { role: string; content: unknown }[] }).messages.filter((m) => m.role === 'user').slice(-2);
    const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text: string }[]).map((b) => b.text).join('\n'));
    expect(last.user_content).toBe(sent.map((m) => text(m.content)).join('\n\n'));
    expect(actf.steps.slice(0, -1)).toEqual(bare.steps.slice(0, -1));
    // OpenClaw wrote a redaction marker for every system prompt: never taken as one (this fixture's calls lack theirs).
    expect([...trace.runs.values()].flatMap((r) => r.contexts).map((c) => c.system)).toEqual(Array(5).fill(null));
    expect(actf.system_prompt_source).not.toBe('cache_trace');
    expect(openClawSftBlocker(tree.root, trace, rootCalls)).toBeUndefined();
    // Without the request, only the trace's copy, which OpenClaw's diagnostics redaction changed: not used.
    expect(openClawToActf(tree.root, { trace }).steps.at(-1)!.user_content).toBeNull();
    expect(openClawSftBlocker(tree.root, trace)).toMatch(/no announcement run of logs\/cache-trace.jsonl binds it/);
    expect(openClawSftBlocker(tree.root, null)).toMatch(/1 repl\(ies\) of session .* answer an input the transcript does not keep .*no cache trace/);
  });

  it('system prompt: the captured request’s when there is one; the trace’s kept copy only without it (seeds/003 B12.2)', () => {
    const rootCalls = attributeCalls(calls, people).filter((c) => c.participant_id === people[0]!.participant);
    // Exec runs keep the system prompt in the trace, as OpenClaw assembled it before the provider wrapper took out
    // its cache-boundary markers: the same trace with such a prompt, and the requests with the prompt they sent.
    const kept = { ...trace, runs: new Map([...trace.runs].map(([k, r]) => [k, { ...r, contexts: r.contexts.map((c) => ({ ...c, system: 'You are OpenClaw.\n<!-- OPENCLAW_CACHE_BOUNDARY -->\nRules.' })) }])) };
    const sent = rootCalls.map((c) => ({ ...c, context: { ...(c.context as object), messages: [{ role: 'system', content: 'You are OpenClaw.\nRules.' }, ...((c.context as { messages: unknown[] }).messages)] } }));
    expect(openClawToActf(tree.root, { wire: sent, trace: kept })).toMatchObject({ system_prompt: 'You are OpenClaw.\nRules.', system_prompt_source: 'wire' });
    expect(openClawToActf(tree.root, { trace: kept })).toMatchObject({ system_prompt: 'You are OpenClaw.\n<!-- OPENCLAW_CACHE_BOUNDARY -->\nRules.', system_prompt_source: 'cache_trace' });
  });

  it('outputs without response ids (older exec runs): coverage is the count of the stream wrapper’s contexts for the root session', () => {
    // The same store with every reply's responseId taken away, as a release that kept none wrote it.
    const bare = (s: typeof tree.root) => ({
      ...s,
      accounting: { ...s.accounting, messages: s.accounting.messages.map((m) => ({ ...m, entry: { ...m.entry, message: { ...(m.entry.message as object), responseId: undefined } } })) },
    });
    const idless = { root: bare(tree.root), children: [] };
    // The root's runs only, as an exec run's trace holds them.
    const rootOnly = { ...trace, runs: new Map([...trace.runs].filter(([, r]) => r.sessionId === tree.root.transcript.id)) };
    const native = openClawNativeCapture(idless, '2026.9.6', rootOnly);
    const rootContexts = [...trace.runs.values()].filter((r) => r.sessionId === tree.root.transcript.id).reduce((n, r) => n + r.contexts.length, 0);
    expect(rootContexts).toBe(3);
    expect(native.outputs).toEqual({ method: 'count', counts: { [people[0]!.participant]: 3 } });
    expect(native.soleParticipant?.evidence).toContain(`the cache trace's stream wrapper names only session ${tree.root.transcript.id} (3 stream contexts)`);
    // A trace whose stream wrapper also fed another session: no call is the root's by the proxy alone.
    const shared = openClawNativeCapture(idless, '2026.9.6', trace);
    expect(shared.soleParticipant).toBeUndefined();
    expect(shared.participants[0]!.reason).toContain(`also fed session(s) ${tree.children[0]!.session.transcript.id}`);
    // Without a trace: the transcript's assistant messages, and the dedicated proxy as the only identity evidence.
    expect(openClawNativeCapture(idless, '2026.9.6', null).soleParticipant?.evidence).toContain("this run's own proxy and OpenClaw exec runs one participant");
  });

  it('a store without its trace beside it reads as no trace', () => {
    const copy = join(tmp.path, 'state');
    cpSync(join(dir, 'state'), copy, { recursive: true });
    rmSync(join(copy, 'logs'), { recursive: true });
    expect(cacheTraceBeside(join(copy, 'agents/main/agent/openclaw-agent.sqlite'))).toBeNull();
  });
});

describe('OpenClaw nested announcements: a child woken after its own child settled is announced by its wake run', () => {
  // A real Gateway run root -> child -> grandchild (tests/fixtures/openclaw/gateway-nested, see PROVENANCE.md).
  const nested = join(repoRoot, 'tests/fixtures/openclaw/gateway-nested');
  const nestedStore = join(nested, 'state/agents/main/agent/openclaw-agent.sqlite');
  const nestedCalls = readFileSync(join(nested, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));
  const tree = openClawTrees(readOpenClawStore(nestedStore))[0]!;
  const trace = readOpenClawCacheTrace(cacheTraceBeside(nestedStore)!);
  const people = openClawParticipants(tree);

  it('the root’s run announces the child’s wake run (`announce:v1:<key>:announce:v1:<key>:<run>:wake`), read past the key', () => {
    expect(people.map((p) => [p.role, p.depth])).toEqual([['root', 0], ['child', 1], ['child', 2]]);
    const runs = openClawAnnouncements(tree, trace);
    const child = people[1]!.native_id!;
    const wake = announcedRunOf(runs[child]!.runId, child)!;
    expect(wake).toMatch(new RegExp(`^announce:v1:${child}:[0-9a-f-]{36}:wake$`));
    expect(trace.runs.get(wake)?.sessionKey).toBe(child);
    expect(Object.keys(runs).sort()).toEqual([people[1]!.native_id, people[2]!.native_id].sort());
  });

  it('every delivery is established in its parent’s announcement reply, with the run as evidence', () => {
    const native = openClawNativeCapture(tree, '2026.9.6', trace);
    const attributed = attributeCalls(nestedCalls, people);
    const relations = deriveRelations({ calls: attributed, participants: people, scope: 'test', announcements: native.announcements!, delivery: openClawDelivery });
    for (const child of people.slice(1)) {
      const mine = relations.filter((r) => r.child_participant_id === child.participant && (r.type === 'result_delivered' || r.type === 'result_in_context'));
      expect(mine.map((r) => [r.type, r.status, r.parent_participant_id])).toEqual([
        ['result_delivered', 'established', child.parent],
        ['result_in_context', 'established', child.parent],
      ]);
      expect(mine[1]!.evidence).toContainEqual({ source: 'logs/cache-trace.jsonl', event_id: native.announcements!.runs[child.native_id!]!.runId, retained: true });
    }
  });
});

describe('OpenClaw completions that arrive together: one is delivered by a requester-settle run', () => {
  // A real Gateway run under load (tests/fixtures/openclaw/gateway-batched-delivery, see PROVENANCE.md).
  const batched = join(repoRoot, 'tests/fixtures/openclaw/gateway-batched-delivery');
  const stores = findOpenClawStores(join(batched, 'state'));
  const tree = openClawTrees(readOpenClawStores(stores))[0]!;
  const trace = readOpenClawCacheTrace(cacheTraceBeside(stores[0]!)!);
  const people = openClawParticipants(tree);
  const batchedCalls = readFileSync(join(batched, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));

  it('reads the run ids a requester-settle run names (agent, requester key, run ids, a yield generation)', () => {
    expect(settledRunsOf('announce:requester-settle:main:agent:main:main:a-1,b-2')).toEqual(['a-1', 'b-2']);
    expect(settledRunsOf('announce:requester-settle:main:agent:main:main:a-1:yield-2')).toEqual(['a-1']);
    expect(settledRunsOf('announce:v1:agent:main:subagent:x:a-1')).toEqual([]);
  });

  it("each child is bound to the run that announced it: the reader's own announce:v1 run, the other's requester-settle run", () => {
    const runs = openClawAnnouncements(tree, trace);
    const [main, reader] = ['agent:main:subagent:', 'agent:reader:subagent:'].map((k) => people.find((p) => p.native_id.startsWith(k))!);
    expect(runs[reader!.native_id]!.runId).toMatch(/^announce:v1:agent:reader:subagent:/);
    expect(runs[main!.native_id]!.runId).toMatch(/^announce:requester-settle:main:agent:main:main:/);
  });

  it('both deliveries are established (on the old rule the second stayed unknown: 1 result_delivered of 2)', () => {
    const native = openClawNativeCapture(tree, '2026.9.6', trace);
    const attributed = attributeCalls(batchedCalls, people);
    const relations = deriveRelations({ calls: attributed, participants: people, scope: 'test', announcements: native.announcements!, delivery: openClawDelivery });
    const delivered = relations.filter((r) => r.type === 'result_delivered');
    expect(delivered.map((r) => r.status)).toEqual(['established', 'established']);
    expect(new Set(delivered.map((r) => r.child_participant_id))).toEqual(new Set(people.filter((p) => p.role === 'child').map((p) => p.participant)));
  });
});
