import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AtifTrajectory, checkValue } from '../../../src/schemas/index.js';
import { atifFixture } from '../../support/paths.js';

type Json = Record<string, any>;
const fixture = (): Json => JSON.parse(readFileSync(atifFixture, 'utf8')) as Json;
const issues = (doc: unknown) => checkValue(AtifTrajectory, doc);

describe('ATIF v1.7 validator rules (reference/ATIF.md)', () => {
  it('accepts the RFC 0001 example', () => {
    expect(issues(fixture())).toEqual([]);
  });

  it('rejects a tool result whose source_call_id points into another step', () => {
    const doc = fixture();
    const agentSteps = (doc.steps as Json[]).filter((s) => s.source === 'agent' && s.tool_calls?.length);
    const withCalls = agentSteps[0]!;
    const other = (doc.steps as Json[]).find((s) => s.source === 'agent' && s !== withCalls)!;
    other.observation = { results: [{ source_call_id: withCalls.tool_calls[0].tool_call_id, content: 'late result' }] };
    const i = (doc.steps as Json[]).indexOf(other);
    expect(issues(doc)).toEqual([
      {
        path: ['steps', i, 'observation', 'results', 0, 'source_call_id'],
        message: `Observation result references source_call_id '${withCalls.tool_calls[0].tool_call_id}' which is not found in step ${other.step_id}'s tool_calls`,
      },
    ]);
  });

  it('requires step_id to be 1..N in order', () => {
    const doc = fixture();
    doc.steps[1].step_id = 7;
    expect(issues(doc)).toContainEqual({ path: ['steps', 1, 'step_id'], message: 'expected 2 (sequential from 1), got 7' });
  });

  it('forbids unknown fields anywhere', () => {
    const doc = fixture();
    doc.steps[1].tool_calls[0].mcp_server = 'x';
    expect(issues(doc)).toContainEqual({ path: ['steps', 1, 'tool_calls', 0, 'mcp_server'], message: expect.stringContaining('unexpected field') });
  });

  it('keeps agent-only fields off user and system steps', () => {
    const doc = fixture();
    doc.steps[0].reasoning_content = 'thinking on a user step';
    expect(issues(doc)).toContainEqual({
      path: ['steps', 0, 'reasoning_content'],
      message: "Field 'reasoning_content' is only applicable when source is 'agent', but source is 'user'",
    });
  });

  it('rejects duplicate tool_call_ids in a step, and metrics with llm_call_count 0', () => {
    const doc = fixture();
    const step = doc.steps[1];
    step.tool_calls[1].tool_call_id = step.tool_calls[0].tool_call_id;
    step.llm_call_count = 0;
    step.metrics = { prompt_tokens: 1 };
    const paths = issues(doc).map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['steps.1.tool_calls.1.tool_call_id', 'steps.1.metrics', 'steps.1.reasoning_content']));
  });

  it('requires arguments to be a JSON object, not a string (as Harbor: semantic rules run once fields are well-typed)', () => {
    const doc = fixture();
    doc.steps[1].tool_calls[0].arguments = '{"ticker":"GOOGL"}';
    expect(issues(doc).map((i) => i.path.join('.'))).toEqual(['steps.1.tool_calls.0.arguments']);
  });

  it('rejects bad timestamps, versions and content parts', () => {
    const doc = fixture();
    doc.schema_version = 'ATIF-v2.0';
    doc.steps[0].timestamp = 'yesterday';
    doc.steps[0].message = [{ type: 'image', text: 'no source' }];
    const paths = issues(doc).map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['schema_version', 'steps.0.timestamp', 'steps.0.message.0.source', 'steps.0.message.0.text']));
  });

  it('checks embedded subagents: ids present and unique, refs resolve, each is itself valid', () => {
    const doc = fixture();
    const sub: Json = { ...fixture(), trajectory_id: 'sub-1' };
    doc.subagent_trajectories = [sub, { ...fixture(), trajectory_id: 'sub-1' }];
    doc.steps[1].observation.results[0].subagent_trajectory_ref = [{ trajectory_id: 'sub-9' }];
    (sub.steps as Json[])[0]!.step_id = 3;
    const paths = issues(doc).map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining([
        'subagent_trajectories.1.trajectory_id',
        'steps.1.observation.results.0.subagent_trajectory_ref.0.trajectory_id',
        'subagent_trajectories.0.steps.0.step_id',
      ]),
    );
  });

  it('accepts a ref that resolves to an embedded subagent', () => {
    const doc = fixture();
    doc.schema_version = 'ATIF-v1.7';
    doc.subagent_trajectories = [{ ...fixture(), schema_version: 'ATIF-v1.7', trajectory_id: 'sub-1' }];
    doc.steps[1].observation.results[0].subagent_trajectory_ref = [{ trajectory_id: 'sub-1', session_id: 'informational' }];
    expect(issues(doc)).toEqual([]);
  });
});
