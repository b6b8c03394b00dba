import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertNative } from '../../src/pipelines/convert.js';
import { AtifTrajectory, checkValue, type Actf, type SampleInfo } from '../../src/schemas/index.js';
import { actfToAtif } from '../../src/transforms/atif/from-actf.js';
import { expectGolden, stableJson } from '../support/golden.js';
import { repoRoot } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('atif-export');

const info = (extra: Partial<SampleInfo> = {}): SampleInfo =>
  ({
    schema: 'roller.sample-info/v1', task_id: 'delegate', index: 0, model: 'scripted/default', harness: { name: 'claude-code', version: '2.1.332' },
    status: 'ok', error: null, attempts: [], elapsed_ms: 0, usage: { input: 1, cached_input: 0, cache_creation: 0, output: 1, reasoning: 0, cost_usd: 0.01, requests: 2 },
    trajectory: { raw_schema: null, raw: null, actf: 'trace_ACTF.json', sft: null }, results: [], runtime: { trajectory_conversion: [] }, provenance: {}, ...extra,
  }) as SampleInfo;

describe('ATIF export (seeds/003 §4.5)', () => {
  it('golden: the lab Claude Code session with its sub-agent call, valid under the ATIF validator rules', async () => {
    const out = join(tmp.path, 'cc');
    await convertNative({ harness: 'claude-code', native: join(repoRoot, 'tests/fixtures/claude-code/lab-single'), out, keepThinking: true });
    const actf = JSON.parse(readFileSync(join(out, 'trace_ACTF.json'), 'utf8')) as Actf;
    const { trajectory, images } = actfToAtif(actf, info(), 'demo/scripted_default/0_delegate');
    expect(checkValue(AtifTrajectory, trajectory)).toEqual([]);
    expect(images).toEqual([]);
    expect(trajectory.steps.filter((s: { source: string }) => s.source === 'agent')).toHaveLength(actf.steps.length);
    await expectGolden(join(repoRoot, 'tests/golden/atif/lab-single.trajectory.json'), stableJson(trajectory));
  });

  it('a result of a call made in an earlier step keeps toolCallId in extra (ATIF refers only within a step); images go to images/ by hash; string arguments stay beside {}', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
    const actf = {
      schema_version: 'roller.actf/v1', system_prompt: '', system_prompt_source: 'none', tools: null, tools_source: 'none',
      steps: [
        { step_id: 1, user_content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }], assistant_content: { reasoning_content: null, content: '', tool_calls: [{ id: 'c1', name: 'apply', type: 'custom', arguments: '*** patch' }] }, observation: [], metric: null, started_at: null, finished_at: null, stop_reason: 'tool_calls' },
        { step_id: 2, user_content: null, assistant_content: { reasoning_content: null, content: 'done', tool_calls: [] }, observation: [{ toolCallId: 'c1', content: 'ok', isError: false }], metric: null, started_at: null, finished_at: null, stop_reason: 'stop' },
      ],
      timing: { started_at: null, finished_at: null, duration_ms: null },
    } as unknown as Actf;
    const { trajectory, images } = actfToAtif(actf, info(), 's');
    expect(checkValue(AtifTrajectory, trajectory)).toEqual([]);
    expect(images).toHaveLength(1);
    expect(images[0]!.path).toMatch(/^images\/[0-9a-f]{64}\.png$/);
    const [user, first, second] = trajectory.steps;
    expect(user.message[1]).toEqual({ type: 'image', source: { media_type: 'image/png', path: images[0]!.path } });
    expect(first.tool_calls[0]).toEqual({ tool_call_id: 'c1', function_name: 'apply', arguments: {}, extra: { type: 'custom', arguments: '*** patch' } });
    expect(second.observation.results[0]).toEqual({ content: 'ok', extra: { isError: false, toolCallId: 'c1' } });
  });
});
