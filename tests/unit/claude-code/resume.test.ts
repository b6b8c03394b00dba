/**
 * A finished sub-agent resumed by a new delegation (seeds/000 A9.4): a real Claude Code 2.1.332 run
 * (tests/fixtures/claude-code/resume-2.1.332, see PROVENANCE.md) in which the root delegates, then resumes the same
 * agent with SendMessage. The resume is judged finished by the task-notification carrying its own tool id, never by
 * the first delegation's completion.
 */
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeDelivery } from '../../../src/harnesses/claude-code/delivery.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Participant } from '../../../src/schemas/manifest.js';
import { checkValue, type Call } from '../../../src/schemas/index.js';
import { attributeCalls } from '../../../src/transforms/capture/correlate.js';
import { deriveRelations } from '../../../src/transforms/capture/relations.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('claude-resume');
const fixture = join(repoRoot, 'tests/fixtures/claude-code/resume-2.1.332');
const calls = readFileSync(join(fixture, 'calls.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Call), participant_id: null }));

const mainFile = async (root: string) => {
  const project = join(root, 'projects', (await readdir(join(root, 'projects')))[0]!);
  return join(project, (await readdir(project)).find((f) => f.endsWith('.jsonl'))!);
};
const participantsOf = async (native: string, out: string) => (await convertNative({ harness: 'claude-code', native, out: join(tmp.path, out), keepThinking: true }))[0]!.participants;
/** The fixture with its main session file's records passed through `edit` (null drops a record). */
const edited = async (name: string, edit: (r: Json) => Json | null) => {
  const copy = join(tmp.path, name);
  await cp(fixture, copy, { recursive: true });
  const file = await mainFile(copy);
  const records = (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => edit(JSON.parse(l) as Json));
  await writeFile(file, records.filter((r) => r !== null).map((r) => JSON.stringify(r)).join('\n') + '\n');
  return copy;
};
const isNotification = (r: Json) => r.type === 'user' && r.origin?.kind === 'task-notification';

describe('Claude Code: a child resumed by SendMessage is judged by the new tool id (seeds/000 A9.4)', () => {
  it('the resume is recorded with its own tool id and its own completion; the spawn’s ending is kept apart', async () => {
    const people = await participantsOf(fixture, 'whole');
    expect(people.map((p) => p.role)).toEqual(['root', 'child']);
    const child = people[1]!;
    const resume = child.resumed_by![0]!;
    expect(child.resumed_by).toHaveLength(1);
    expect(resume.tool_call_id).not.toBe(child.spawn_tool_call_id);
    expect(resume).toMatchObject({ parent_participant_id: people[0]!.participant, status: 'completed', status_source: expect.stringMatching(/\.jsonl:\d+#task-notification\.status$/) });
    expect(child.spawn_status).toMatchObject({ status: 'completed', status_source: expect.stringMatching(/#toolUseResult\.status$/) });
    expect([child.status, child.status_source]).toEqual([resume.status, resume.status_source]);
    // The resumed run's messages are the child's own: the same file, one participant.
    expect(child.messages).toBe(4);
    const asManifest = { participant_id: child.participant, role: child.role, native_ids: { native_id: child.native_id }, parent_participant_id: child.parent, spawn_tool_call_id: child.spawn_tool_call_id, depth: child.depth, model: null, call_ids: [], status: child.status, status_source: child.status_source, reason: child.reason, spawn_result: 'result', resumed_by: child.resumed_by, spawn_status: child.spawn_status };
    expect(checkValue(Participant, asManifest)).toEqual([]);
  });

  it('relations per delegation: the spawn’s, and the resume’s launch, completion and delivery by its own tool id', async () => {
    const people = await participantsOf(fixture, 'relations');
    const [root, child] = people as [(typeof people)[number], (typeof people)[number]];
    const attributed = attributeCalls(calls, people);
    const relations = deriveRelations({ calls: attributed, participants: people, scope: 'test', delivery: claudeCodeDelivery });
    const of = (tool: string | null) => relations.filter((r) => r.tool_call_id === tool && r.status === 'established').map((r) => r.type);
    expect(new Set(of(child.spawn_tool_call_id))).toEqual(new Set(['spawn', 'child_completed', 'result_delivered', 'result_in_context']));
    const resumeId = child.resumed_by![0]!.tool_call_id;
    expect(new Set(of(resumeId))).toEqual(new Set(['launch_acknowledged', 'launch_ack_in_context', 'child_completed', 'result_delivered', 'result_in_context']));
    // The resume was made by the root call whose output holds the SendMessage, and its result reached the root in a
    // later call's input as the task-notification that names the new tool id.
    const resuming = attributed.find((c) => c.tool_refs.some((t) => t.id === resumeId))!;
    expect(relations.find((r) => r.tool_call_id === resumeId && r.type === 'launch_acknowledged')!.parent_call_id).toBe(resuming.call_id);
    for (const r of relations.filter((x) => x.tool_call_id === resumeId && x.type === 'result_in_context')) {
      const c = attributed.find((x) => x.call_id === r.in_call_id)!;
      expect(c.participant_id).toBe(root.participant);
      expect(c.seq).toBeGreaterThan(resuming.seq);
      expect(JSON.stringify(c.context)).toContain(`<tool-use-id>${resumeId}</tool-use-id>`);
    }
  });

  it('a resume whose completion never came (the session cut before it) is running: the earlier completion is not reused', async () => {
    const cut = await edited('no-notification', (r) => (isNotification(r) ? null : r));
    const child = (await participantsOf(cut, 'no-notification-out'))[1]!;
    expect(child.status).toBe('running');
    expect(child.status_source).toMatch(/#toolUseResult\.resumedAgentId$/);
    expect(child.spawn_status?.status).toBe('completed');
    const relations = deriveRelations({ calls: [], participants: [child], scope: 'test' });
    expect(relations.filter((r) => r.type === 'child_completed').map((r) => r.tool_call_id)).toEqual([child.spawn_tool_call_id]);
  });

  it('a task-notification naming the agent under the first delegation’s tool id is no proof for the resume', async () => {
    const first = (await participantsOf(fixture, 'first-id'))[1]!;
    const resumeId = first.resumed_by![0]!.tool_call_id;
    const swap = (v: unknown): unknown => (typeof v === 'string' ? v.split(resumeId).join(first.spawn_tool_call_id!) : Array.isArray(v) ? v.map(swap) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)])) : v);
    const moved = await edited('first-id-notification', (r) => (isNotification(r) ? (swap(r) as Json) : r));
    const child = (await participantsOf(moved, 'first-id-out'))[1]!;
    expect(child.resumed_by![0]).toMatchObject({ tool_call_id: resumeId, status: 'running' });
    expect(child.status).toBe('running');
  });
});
