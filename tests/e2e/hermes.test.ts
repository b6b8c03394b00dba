/**
 * Hermes (Nous Research's agent, `hermes_agent` from PyPI in a venv of its own): installed by roller, run headless
 * (`hermes -z`) on the embedded scripted model and on an API model (the scripted model served with a key only roller's
 * proxy holds). Its delegate_task child is a participant joined to its calls by the session roller's plugin names on
 * each request, with tokens equal to its session's; the run validates, reprocesses to the same bytes and exports ATIF.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { info, readJson, readJsonl, roller, sample } from '../support/collect-run.js';
import { filesHolding } from '../support/files-holding.js';
import { runChecks } from '../support/run-checks.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('hermes');
const { expectReprocessReproduces, expectAtifExport } = runChecks(tmp);
const provider = useScriptedProvider(tmp);
const demo = join(import.meta.dirname, '..', '..', 'examples', 'tasks', 'demo.jsonl');

/** Each participant's tokens summed over the calls attributed to it (the capture's own calls.jsonl). */
function tokensByParticipant(capture: string): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const c of readJsonl(join(capture, 'calls.jsonl'))) {
    const u = c.usage?.normalized;
    if (!u || !c.participant_id) continue;
    const t = out.get(c.participant_id) ?? { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
    out.set(c.participant_id, { input: t.input + u.input, cache_creation: t.cache_creation + u.cache_creation, cache_read: t.cache_read + u.cached_input, output: t.output + u.output, reasoning: t.reasoning + (u.reasoning ?? 0) });
  }
  return out;
}

describe('Hermes from PyPI (hermes_agent 0.19.0 in a venv, headless, offline)', () => {
  it('roller harness install hermes: a venv on a Python in range, every distribution pinned with its sha256, reused after', async () => {
    const first = await roller(['harness', 'install', 'hermes']);
    expect(first.code, first.stderr).toBe(0);
    const bin = first.stdout.trim().split('\n').at(-1)!;
    expect(bin).toMatch(/hermes-0\.19\.0\/venv\/bin\/hermes$/);
    const lock = readFileSync(join(bin, '..', '..', '..', 'requirements.lock'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lock.length).toBeGreaterThan(30);
    expect(lock.find((l) => l.startsWith('hermes_agent==') || l.startsWith('hermes-agent=='))).toMatch(/==0\.19\.0 --hash=sha256:[0-9a-f]{64}$/);
    expect(lock.every((l) => /^[A-Za-z0-9._-]+==[^ ]+ --hash=sha256:[0-9a-f]{64}$/.test(l))).toBe(true);
    const again = await roller(['harness', 'install', 'hermes']);
    expect([again.code, again.stdout.trim().split('\n').at(-1)]).toEqual([0, bin]);
  }, 15 * 60_000);

  for (const on of ['the embedded scripted model', 'an API model'] as const) {
    it(`the demo tasks on ${on}: greeting, file write, and a delegate_task child joined by the session roller's plugin names, with its session's tokens`, async () => {
      const api = on === 'an API model';
      const name = api ? 'api' : 'scripted';
      const out = join(tmp.path, 'runs');
      const r = await roller(['collect', '--tasks', demo, '--harness', 'hermes', '--output', out, '--run-name', name, '--capture-calls', '--capture-debug', 'full', ...(api ? ['--model', 'api/hermes', '--model-config', provider.models] : [])], api ? { env: provider.env } : {});
      expect(r.code, r.stderr).toBe(0);
      const run = join(out, name);
      expect((await roller(['validate-run', run])).code).toBe(0);
      const rows = info(run).samples;
      expect(rows.map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
      expect(readFileSync(join(run, rows[1]!.path, 'results', 'hello.txt'), 'utf8')).toBe('hi\n');
      const delegate = sample(run, rows[2]!);
      const participants = delegate.runtime.participants as Json[];
      expect(participants.map((p) => [p.role, p.status])).toEqual([['root', 'completed'], ['child', 'completed']]);
      expect(delegate.trajectory).toMatchObject({ raw_schema: 'roller.hermes-events/v1', actf: 'trace_ACTF.json', sft: 'trace_SFT.json' });
      const capture = join(run, rows[2]!.path, 'capture', 'attempt-0001');
      expect(readJson<Json>(join(capture, 'manifest.json'))).toMatchObject({ capture_status: 'complete', coverage: { method: 'count', status: 'verified' } });
      // Every model call joined by the session roller's plugin named on it (Hermes keeps no response id and sends no
      // session header of its own): the header kept as identity, removed before forwarding.
      const modelCalls = readJsonl(join(capture, 'calls.jsonl')).filter((c) => c.protocol === 'openai-chat-completions');
      expect(modelCalls).toHaveLength(4);
      for (const c of modelCalls) {
        expect([c.identity_status, `session:${c.native_identity.session_id}`, c.dropped_request_headers]).toEqual(['attributed', c.participant_id, ['x-roller-session-id']]);
      }
      // Each participant's tokens (its Hermes session's) equal those of the calls joined to it.
      const byCalls = tokensByParticipant(capture);
      for (const p of participants) expect([p.participant, byCalls.get(p.participant)]).toEqual([p.participant, p.tokens]);
      const relations = readJsonl(join(capture, 'relations.jsonl'));
      expect(relations.map((x) => x.type)).toEqual(expect.arrayContaining(['spawn', 'child_completed', 'result_delivered', 'result_in_context']));
      expect(relations.every((x) => x.tool_call_id === participants[1]!.spawn_tool_call_id)).toBe(true);
      // Hermes probes what server its base is without a key: refused, recorded, said; never a bypass.
      expect(delegate.runtime.warnings).toEqual([expect.stringMatching(/request\(s\) the harness sent without a credential to paths no model protocol has/)]);
      if (api) expect(filesHolding(provider.key, [run])).toEqual([]);
      else {
        await expectReprocessReproduces(run);
        expect((await expectAtifExport(run)).length).toBe(3);
      }
    }, 10 * 60_000);
  }
});
