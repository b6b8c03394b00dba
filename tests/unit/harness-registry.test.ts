import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { ErrorCode, isRollerError } from '../../src/core/errors.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessAdapter, harnessNames, isShippedAdapter, registerHarness, runnableHarnesses, verifiableHarnesses, verifyOf } from '../../src/harnesses/index.js';
import { convertNative } from '../../src/pipelines/convert.js';
import { Actf, checkValue, SftRecord } from '../../src/schemas/index.js';
import { toyAdapter } from '../support/toy-harness/adapter.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('harness-registry');

describe('harness registry', () => {
  it('ships the seven harnesses, every one with a pinned CLI it can run', () => {
    expect(harnessNames()).toEqual(expect.arrayContaining(['claude-code', 'codex', 'opencode', 'pi', 'openclaw', 'hermes', 'deepseek']));
    expect(runnableHarnesses().sort()).toEqual(['claude-code', 'codex', 'deepseek', 'hermes', 'openclaw', 'opencode', 'pi']);
    expect(() => harnessAdapter('nope')).toThrow(/unknown harness 'nope' \(known: claude-code, codex/);
  });

  it('a harness of the tests, registered from its own folder, converts through the same pipeline as the shipped ones', async () => {
    registerHarness(toyAdapter);
    const file = join(tmp.path, 's1.toy.jsonl');
    writeFileSync(file, ['{"kind":"user","text":"hi"}', '{"kind":"assistant","id":"m1","text":"hello","usage":{"input":5,"output":2}}'].join('\n'));
    const [s] = await convertNative({ harness: 'toy', native: tmp.path, out: join(tmp.path, 'out'), keepThinking: true });
    expect(s).toMatchObject({ sessionId: 's1', steps: 1, sft: { status: 'ok' } });
    const actf = JSON.parse(readFileSync(join(tmp.path, 'out', 'trace_ACTF.json'), 'utf8')) as unknown;
    expect(checkValue(Actf, actf)).toEqual([]);
    expect(checkValue(SftRecord, JSON.parse(readFileSync(join(tmp.path, 'out', 'trace_SFT.json'), 'utf8')))).toEqual([]);
    expect(JSON.parse(readFileSync(join(tmp.path, 'out', 'usage.json'), 'utf8'))).toMatchObject({ harness: 'toy', participants: [{ participant: 'session:s1', tokens: { input: 5, output: 2 } }] });
    expect(readFileSync(join(tmp.path, 'out', 'trace.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  });
});

describe('an adapter that produces an ACTF roller cannot validate (B16.1)', () => {
  it('is a conversion error naming the session and each bad field; no trace_ACTF.json or SFT is written, the raw trace is kept', async () => {
    // A user's adapter with a bug: step ids from 0.
    registerHarness({ ...toyAdapter, name: 'toy-off-by-one', convert: async (native, input) => (await toyAdapter.convert(native, input)).map((s) => ({ ...s, actf: { ...s.actf, steps: s.actf.steps.map((st) => ({ ...st, step_id: st.step_id - 1 })) } })) });
    const dir = join(tmp.path, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 's2.toy.jsonl'), ['{"kind":"user","text":"hi"}', '{"kind":"assistant","id":"m1","text":"hello"}'].join('\n'));
    const out = join(tmp.path, 'bad-out');
    const err = await convertNative({ harness: 'toy-off-by-one', native: dir, out, keepThinking: true }).catch((e: unknown) => e);
    expect(isRollerError(err, ErrorCode.CONVERSION_INVALID), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/s2\.toy\.jsonl.*: the ACTF produced is not valid \(\$\.steps\[0\]\.step_id: .*\); this is a bug in the registered 'toy-off-by-one' adapter: roller checks every ACTF before writing it$/);
    expect(existsSync(join(out, 'trace_ACTF.json'))).toBe(false);
    expect(existsSync(join(out, 'trace_SFT.json'))).toBe(false);
    expect(readFileSync(join(out, 'trace.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  });
});

describe('roller verify', () => {
  it('takes exactly the harnesses whose runner lists acceptance scenarios, and each names its matrix scenarios among them', () => {
    expect(verifiableHarnesses().filter((h) => isShippedAdapter(harnessAdapter(h))).sort()).toEqual(['claude-code', 'codex', 'deepseek', 'hermes', 'openclaw', 'opencode', 'pi']);
    for (const h of verifiableHarnesses()) {
      const { scenarios, matrix } = verifyOf(h);
      for (const name of matrix) expect(scenarios.map((s) => s.name), `${h}: ${name}`).toContain(name);
      expect(new Set(scenarios.map((s) => s.name)).size, `${h}: scenario names are unique`).toBe(scenarios.length);
    }
    expect(() => verifyOf('nope')).toThrow(/nope/);
  });
});
