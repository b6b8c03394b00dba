import { readFile, writeFile, mkdir, cp } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError, ErrorCode } from '../../../src/core/index.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import { Actf, SftRecord, checkValue, type Call } from '../../../src/schemas/index.js';
import { expectGolden, stableJson, stableJsonl } from '../../support/golden.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('convert');
const fixture = join(repoRoot, 'tests/fixtures/claude-code/lab-single');
const golden = join(repoRoot, 'tests/golden/claude-code/lab-single');
const served = JSON.parse(await readFile(join(repoRoot, 'tests/fixtures/claude-code/lab-scripted-responses.json'), 'utf8')) as { message: Json }[];

describe('a sub-agent whose spawning call is not on record (seeds/004)', () => {
  it('depth -1 with the reason, never 0, and a valid manifest participant', async () => {
    const { rm, readdir } = await import('node:fs/promises');
    const { Participant } = await import('../../../src/schemas/manifest.js');
    const copy = join(tmp.path, 'unseen-spawn');
    await cp(fixture, copy, { recursive: true });
    const project = join(copy, 'projects', '-workspace-demo');
    const sessionFile = (await readdir(project)).find((f) => f.endsWith('.jsonl'))!;
    const subagents = join(project, sessionFile.replace('.jsonl', ''), 'subagents');
    for (const f of await readdir(subagents)) if (f.endsWith('.meta.json')) await rm(join(subagents, f));
    // The parent's tool_result no longer names the agent: nothing on record says which call spawned it.
    const lines = (await readFile(join(project, sessionFile), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    await writeFile(join(project, sessionFile), lines.map(({ toolUseResult: _t, ...r }) => JSON.stringify(r)).join('\n') + '\n');
    const [s] = await convertNative({ harness: 'claude-code', native: copy, out: join(tmp.path, 'unseen-out'), keepThinking: true });
    const child = s!.participants.find((p) => p.role === 'child')!;
    expect([child.depth, child.parent, child.spawn_tool_call_id]).toEqual([-1, null, null]);
    expect(child.reason).toMatch(/no tool call spawned it on record/);
    const asManifest = { participant_id: child.participant, role: child.role, native_ids: { native_id: child.native_id }, parent_participant_id: child.parent, spawn_tool_call_id: child.spawn_tool_call_id, depth: child.depth, model: null, call_ids: [], status: child.status, status_source: child.status_source, reason: child.reason, spawn_result: null };
    expect(checkValue(Participant, asManifest)).toEqual([]);
    // A child of depth 0, or of -1 with its spawn known, or without a reason, is refused.
    expect(checkValue(Participant, { ...asManifest, depth: 0 })).not.toEqual([]);
    expect(checkValue(Participant, { ...asManifest, spawn_tool_call_id: 'toolu_1', parent_participant_id: 'session:x' })).not.toEqual([]);
    expect(checkValue(Participant, { ...asManifest, reason: null })).not.toEqual([]);
  });
});

describe('a nested return without toolUseResult (seeds/000 A9.3; real CLI 2.1.332, tests/fixtures/claude-code/nested-2.1.332)', () => {
  const nested = join(repoRoot, 'tests/fixtures/claude-code/nested-2.1.332');
  const grandchildOf = async (native: string, out: string) => {
    const [s] = await convertNative({ harness: 'claude-code', native, out: join(tmp.path, out), keepThinking: true });
    return s!.participants.find((p) => p.depth === 2)!;
  };
  const subagentsOf = async (root: string) => {
    const { readdir } = await import('node:fs/promises');
    const project = join(root, 'projects', (await readdir(join(root, 'projects')))[0]!);
    const session = (await readdir(project)).find((f) => f.endsWith('.jsonl'))!;
    return join(project, session.replace('.jsonl', ''), 'subagents');
  };

  it('meta.json’s finished counts once its tool id, parent, the launch record and the return agree', async () => {
    const g = await grandchildOf(nested, 'nested-out');
    expect(g).toMatchObject({ status: 'completed', parent: expect.stringMatching(/^agent:/), reason: null });
    expect(g.status_source).toMatch(/\.meta\.json#finished$/);
  });

  it('a meta.json naming another parent, or a return that points at another launch, leaves the status unknown with the reason', async () => {
    const { readdir } = await import('node:fs/promises');
    const wrongParent = join(tmp.path, 'nested-wrong-parent');
    await cp(nested, wrongParent, { recursive: true });
    const subs = await subagentsOf(wrongParent);
    const metaName = (await readdir(subs)).find((f) => f.endsWith('.meta.json') && JSON.parse(readFileSync(join(subs, f), 'utf8')).spawnDepth === 2)!;
    const meta = JSON.parse(await readFile(join(subs, metaName), 'utf8')) as Json;
    await writeFile(join(subs, metaName), JSON.stringify({ ...meta, parentAgentId: 'a0000000000000000' }));
    const g1 = await grandchildOf(wrongParent, 'nested-wrong-parent-out');
    expect(g1.status).toBe('unknown');
    expect(g1.reason).toMatch(/names parent agent:a0000000000000000, but tool call toolu_\w+ was made by agent:/);

    const wrongLaunch = join(tmp.path, 'nested-wrong-launch');
    await cp(nested, wrongLaunch, { recursive: true });
    const childFile = join(await subagentsOf(wrongLaunch), `agent-${meta.parentAgentId}.jsonl`);
    const lines = (await readFile(childFile, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);
    await writeFile(childFile, lines.map((r) => JSON.stringify(r.sourceToolAssistantUUID ? { ...r, sourceToolAssistantUUID: '00000000-0000-0000-0000-000000000000' } : r)).join('\n') + '\n');
    const g2 = await grandchildOf(wrongLaunch, 'nested-wrong-launch-out');
    expect(g2.status).toBe('unknown');
    expect(g2.reason).toMatch(/sourceToolAssistantUUID \(00000000-0000-0000-0000-000000000000\) is not the launching record/);
  });
});

describe('roller convert: the lab Claude Code run (real CLI 2.1.332)', () => {
  it('writes trace.jsonl, trace_ACTF.json, trace_SFT.json and usage.json equal to the reviewed golden files', async () => {
    const out = join(tmp.path, 'golden');
    const [s] = await convertNative({ harness: 'claude-code', native: fixture, out, keepThinking: true });
    expect(s!.sft).toEqual({ status: 'ok', reason: null });
    await expectGolden(join(golden, 'trace.jsonl'), stableJsonl(await readFile(join(out, 'trace.jsonl'), 'utf8')));
    for (const f of ['trace_ACTF.json', 'trace_SFT.json', 'usage.json']) {
      await expectGolden(join(golden, f), stableJson(JSON.parse(await readFile(join(out, f), 'utf8'))));
    }
    expect(checkValue(Actf, JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')))).toEqual([]);
    expect(checkValue(SftRecord, JSON.parse(await readFile(join(out, 'trace_SFT.json'), 'utf8')))).toEqual([]);
  });

  it('gives a main participant and one sub-agent whose token sums equal the usage the scripted server sent', async () => {
    const [s] = await convertNative({ harness: 'claude-code', native: fixture, out: join(tmp.path, 'usage'), keepThinking: true });
    const [main, sub] = s!.participants;
    expect(s!.participants).toHaveLength(2);
    expect(main).toMatchObject({ role: 'root', depth: 0, status: 'completed' });
    expect(sub).toMatchObject({ role: 'child', depth: 1, parent: main!.participant, spawn_tool_call_id: 'toolu_01TGXRCfyjW73U32GbJBqYaw', status: 'completed' });
    for (const p of [main!, sub!]) {
      const mine = served.filter((r) => p.message_ids.includes(r.message.id)).map((r) => r.message.usage as Json);
      expect(mine.length).toBe(p.messages);
      const sum = (k: string) => mine.reduce((a, u) => a + (u[k] as number), 0);
      expect(p.tokens).toEqual({
        input: sum('input_tokens'),
        cache_creation: sum('cache_creation_input_tokens'),
        cache_read: sum('cache_read_input_tokens'),
        output: sum('output_tokens'),
        reasoning: 0,
      });
    }
    // Every served message belongs to exactly one participant.
    expect([...main!.message_ids, ...sub!.message_ids].sort()).toEqual(served.map((r) => r.message.id).sort());
    // The CLI's own session totals reconcile with the per-participant sums (nothing counted twice).
    const trace = (await readFile(join(tmp.path, 'usage', 'trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Json);
    const cost = trace.filter((r) => r.type === 'cost-state').at(-1)!.modelUsage['claude-opus-5-5'];
    expect(main!.tokens.input + sub!.tokens.input).toBe(cost.inputTokens);
    expect(main!.tokens.output + sub!.tokens.output).toBe(cost.outputTokens);
    expect(main!.tokens.cache_read + sub!.tokens.cache_read).toBe(cost.cacheReadInputTokens);
    expect(main!.tokens.cache_creation + sub!.tokens.cache_creation).toBe(cost.cacheCreationInputTokens);
    expect(main!.cost_usd).toBe(0.045771);
    expect(sub!.cost_usd).toBeNull();
  });

  it('the main ACTF holds only the main thread; system and tools come from the wire when it is given', async () => {
    const lab = (await readFile(join(fixture, 'requests.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const out = join(tmp.path, 'wire');
    await mkdir(out, { recursive: true });
    // The lab's request log as the calls the proxy would have recorded (context = body, identity from headers).
    const calls = lab.map((r, i) => ({ schema: 'roller.call/v1', seq: i, protocol: 'anthropic-messages', context: r.body, native_identity: { session_id: r.headers['x-claude-code-session-id'], ...(r.headers['x-claude-code-agent-id'] ? { agent_id: r.headers['x-claude-code-agent-id'] } : {}) } }) as unknown as Call);
    const wire = join(out, 'calls.jsonl');
    await writeFile(wire, calls.map((c) => JSON.stringify(c)).join('\n'));
    const [s] = await convertNative({ harness: 'claude-code', native: fixture, out, keepThinking: false, wire });
    const actf = JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')) as Json;
    expect(actf.steps.map((st: Json) => st.native_ids.message_id)).toEqual(['msg_010TYc0W6iAUsDTv7fHVEuKy', 'msg_01S7pGrUcYMxTBXv33qDyjFf']);
    const sft = JSON.parse(await readFile(join(out, 'trace_SFT.json'), 'utf8')) as Json;
    expect(sft.messages.filter((m: Json) => m.role === 'assistant').every((m: Json) => m.reasoning_content === '')).toBe(true);
    expect(actf.system_prompt_source).toBe('wire');
    expect(actf.system_prompt).toContain('x-anthropic-billing-header');
    expect(actf.tools.map((t: Json) => t.function.name)).toContain('Agent');
    expect(actf.tools.length).toBe(lab[0]!.body.tools.length);
    expect(sft.messages[0].role).toBe('system');
    expect(s!.sft.status).toBe('ok');
  });

  it('a --wire file that is not calls.jsonl is a clear error naming file and line', async () => {
    await expect(
      convertNative({ harness: 'claude-code', native: fixture, out: join(tmp.path, 'bad-wire'), keepThinking: true, wire: join(fixture, 'requests.jsonl') }),
    ).rejects.toThrow(/requests\.jsonl:1: not a roller\.call\/v1 record .*--wire takes the calls\.jsonl written by roller proxy/);
  });

  it('a known record type in an unknown shape is an error naming file and line', async () => {
    const broken = join(tmp.path, 'broken');
    await cp(fixture, broken, { recursive: true });
    const file = join(broken, 'projects/-workspace-demo/19dd1dea-c596-40d9-b460-8755a96c03f8.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    const i = lines.findIndex((l) => l.includes('"type":"assistant"') || l.includes('"type": "assistant"'));
    const rec = JSON.parse(lines[i]!) as Json;
    rec.message.content = 'not an array';
    lines[i] = JSON.stringify(rec);
    await writeFile(file, lines.join('\n'));
    await expect(convertNative({ harness: 'claude-code', native: broken, out: join(tmp.path, 'broken-out'), keepThinking: true })).rejects.toSatisfy(
      (e) => isRollerError(e, ErrorCode.NATIVE_SHAPE_UNKNOWN) && (e as Error).message.includes(`19dd1dea-c596-40d9-b460-8755a96c03f8.jsonl:${i + 1}`),
    );
  });

  it('a truncated last line (a killed CLI) is reported, and the rest still converts', async () => {
    const cut = join(tmp.path, 'cut');
    await cp(fixture, cut, { recursive: true });
    const file = join(cut, 'projects/-workspace-demo/19dd1dea-c596-40d9-b460-8755a96c03f8.jsonl');
    await writeFile(file, `${await readFile(file, 'utf8')}{"type":"assistant","uuid":"x","mess`);
    const [s] = await convertNative({ harness: 'claude-code', native: cut, out: join(tmp.path, 'cut-out'), keepThinking: true });
    expect(s!.rejectedLines).toBe(1);
    expect(s!.steps).toBe(2);
    const report = JSON.parse(await readFile(join(tmp.path, 'cut-out', 'conversion.json'), 'utf8')) as Json;
    expect(report.rejected_lines[0].code).toBe('ROLLER_JSONL_TRUNCATED_LINE');
  });
});

describe('roller convert: the lab run without --forward-subagent-text, and the stream-json cross-check', () => {
  const runs = [
    ['lab-single', join(repoRoot, 'tests/fixtures/claude-code/lab-single')],
    ['lab-nofwd', join(repoRoot, 'tests/fixtures/claude-code/lab-nofwd')],
  ] as const;
  it.each(runs)('%s: golden files, and the stdout stream agrees with the native files', async (name, dir) => {
    const out = join(tmp.path, `stream-${name}`);
    const [s] = await convertNative({ harness: 'claude-code', native: dir, out, keepThinking: true, stream: join(dir, 'stream.jsonl') });
    expect(s!.streamCheck).toEqual([]);
    const g = join(repoRoot, 'tests/golden/claude-code', name);
    await expectGolden(join(g, 'trace.jsonl'), stableJsonl(await readFile(join(out, 'trace.jsonl'), 'utf8')));
    for (const f of ['trace_ACTF.json', 'trace_SFT.json', 'usage.json']) await expectGolden(join(g, f), stableJson(JSON.parse(await readFile(join(out, f), 'utf8'))));
  });

  it('a stream that disagrees with the native files is reported, not repaired', async () => {
    const dir = join(repoRoot, 'tests/fixtures/claude-code/lab-single');
    const stream = (await readFile(join(dir, 'stream.jsonl'), 'utf8'))
      .split('\n')
      .map((l) => (l.includes('"task_started"') ? l.replace('toolu_01TGXRCfyjW73U32GbJBqYaw', 'toolu_OTHER') : l))
      .join('\n');
    const path = join(tmp.path, 'bad-stream.jsonl');
    await writeFile(path, stream);
    const [s] = await convertNative({ harness: 'claude-code', native: dir, out: join(tmp.path, 'bad-stream'), keepThinking: true, stream: path });
    expect(s!.streamCheck).toEqual(['task a3295bf2ab09c0be8: stream tool_use toolu_OTHER, native toolu_01TGXRCfyjW73U32GbJBqYaw']);
  });

  it("letta's synthetic Claude Code inputs (no message.id, a shape no real CLI writes) are refused with file and line", async () => {
    const letta = join(repoRoot, '..', 'shared', 'reference', 'fixtures', 'claude-code', 'letta-trajectory', 'tool-call', 'input.jsonl');
    const text = await readFile(letta, 'utf8').catch(() => null);
    const path = join(tmp.path, 'letta-input.jsonl');
    // Same first lines as letta's fixture when ../shared is present, an equivalent record otherwise.
    await writeFile(path, text ?? '{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"x"}}\n{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[]}}\n');
    await expect(convertNative({ harness: 'claude-code', native: path, out: join(tmp.path, 'letta'), keepThinking: true })).rejects.toThrow(/letta-input\.jsonl:2: a 'assistant' record has no message\.id/);
  });
});

describe('roller convert: public Claude Code fixtures (tests/fixtures/claude-code/public)', () => {
  const pub = join(repoRoot, 'tests/fixtures/claude-code/public');
  const cases = [
    ['minimal_showcase', 'minimal_showcase'],
    ['sidechain_integrated', 'sidechain_integrated.jsonl'],
    ['dag_compact_after_rewind', 'dag_compact_after_rewind.jsonl'],
  ] as const;
  it.each(cases)('%s matches its reviewed golden files', async (name, input) => {
    const out = join(tmp.path, `public-${name}`);
    await convertNative({ harness: 'claude-code', native: join(pub, input), out, keepThinking: true });
    const g = join(repoRoot, 'tests/golden/claude-code/public', name);
    await expectGolden(join(g, 'trace.jsonl'), stableJsonl(await readFile(join(out, 'trace.jsonl'), 'utf8')));
    for (const f of ['trace_ACTF.json', 'usage.json']) await expectGolden(join(g, f), stableJson(JSON.parse(await readFile(join(out, f), 'utf8'))));
    const sft = await readFile(join(out, 'trace_SFT.json'), 'utf8').catch(() => null);
    await expectGolden(join(g, 'trace_SFT.json'), sft === null ? 'unavailable\n' : stableJson(JSON.parse(sft)));
  });

  it('after a rewind only the branch that continued is converted; the dead one stays in trace.jsonl', async () => {
    const out = join(tmp.path, 'rewind');
    await convertNative({ harness: 'claude-code', native: join(pub, 'dag_compact_after_rewind.jsonl'), out, keepThinking: true });
    const actf = JSON.parse(await readFile(join(out, 'trace_ACTF.json'), 'utf8')) as Json;
    expect(actf.steps.map((s: Json) => s.native_ids.message_id)).toEqual(['msg_a1', 'msg_b2a', 'msg_b2a2', 'msg_p1a']);
    expect(await readFile(join(out, 'trace.jsonl'), 'utf8')).toContain('msg_b1a');
  });

  it('inline sidechains (older layout) are not counted on the main participant', async () => {
    const [s] = await convertNative({ harness: 'claude-code', native: join(pub, 'sidechain_integrated.jsonl'), out: join(tmp.path, 'inline'), keepThinking: true });
    const [main, inline] = s!.participants;
    // One chain of sidechain records is one sub-agent: named by its first record's uuid; its spawning call is not on record.
    expect(inline).toMatchObject({ role: 'child', participant: `sidechain:${inline!.native_id}`, parent: main!.participant, depth: 1, spawn_tool_call_id: null, messages: 1 });
    expect(main!.message_ids).not.toContain('msg_017zj75dqWUNqVxCUrhqbTkf');
    expect(inline!.message_ids).toEqual(['msg_017zj75dqWUNqVxCUrhqbTkf']);
  });

  it('two parallel sub-agents (CLI 2.1.173 layout) each get their own usage and spawning call', async () => {
    const [s] = await convertNative({ harness: 'claude-code', native: join(pub, 'minimal_showcase'), out: join(tmp.path, 'showcase'), keepThinking: true });
    const children = s!.participants.filter((p) => p.role === 'child');
    expect(children.map((c) => c.native_id)).toEqual(['showcol1', 'showcol2']);
    for (const c of children) expect(c.parent).toBe(s!.participants[0]!.participant);
  });
});

describe('usage scan over a whole config tree', () => {
  it('gives the same per-participant tokens as the full conversion, parsing only assistant lines', async () => {
    const { scanUsage } = await import('../../../src/harnesses/claude-code/usage-scan.js');
    const scan = await scanUsage(join(repoRoot, 'tests/fixtures/claude-code'));
    for (const dir of ['lab-single', 'lab-nofwd']) {
      const [s] = await convertNative({ harness: 'claude-code', native: join(repoRoot, 'tests/fixtures/claude-code', dir), out: join(tmp.path, `scan-${dir}`), keepThinking: true });
      for (const p of s!.participants) {
        const found = scan.participants.find((q) => q.participant === p.participant);
        expect(found, p.participant).toBeDefined();
        expect(found!.tokens).toEqual(p.tokens);
        expect(found!.messages).toBe(p.messages);
      }
    }
  });
});

describe('usage scan of files that go away', () => {
  it('a file gone between listing and reading is named (ENOENT) and left out; the others are counted', async () => {
    const { scanFiles } = await import('../../../src/harnesses/claude-code/usage-scan.js');
    const real = join(repoRoot, 'tests/fixtures/claude-code/lab-single/projects/-workspace-demo/19dd1dea-c596-40d9-b460-8755a96c03f8.jsonl');
    const gone = join(tmp.path, 'gone', 'deleted-session.jsonl');
    const scan = scanFiles([gone, real]);
    expect(scan.files).toBe(1);
    expect(scan.participants.map((p) => p.participant)).toEqual(['session:19dd1dea-c596-40d9-b460-8755a96c03f8']);
    expect(scan.unreadable).toEqual([expect.objectContaining({ path: gone, code: 'ENOENT' })]);
  });
});

describe('usage scan in worker threads (compiled module)', () => {
  it('splits the files across workers and gives the same result as one thread', async () => {
    const compiled = join(repoRoot, 'dist/src/harnesses/claude-code/usage-scan.js');
    const mod = (await import(compiled)) as typeof import('../../../src/harnesses/claude-code/usage-scan.js');
    const root = join(repoRoot, 'tests/fixtures/claude-code');
    const one = await mod.scanUsage(root, { workers: 1 });
    const two = await mod.scanUsage(root, { workers: 2 });
    expect(two.files).toBe(one.files);
    expect(two.participants).toEqual(one.participants);
  });
});

describe('usage scan across read boundaries', () => {
  it('counts the same as a whole-file parse when lines and markers straddle 1 MB reads, a line outgrows the buffer, and the last line has no newline', async () => {
    const { scanFiles } = await import('../../../src/harnesses/claude-code/usage-scan.js');
    const { writeFile: write } = await import('node:fs/promises');
    for (const seed of [1, 2, 3, 4, 5]) {
      let x = seed * 7919;
      const rand = (n: number) => ((x = (x * 1103515245 + 12345) % 2147483648), x % n);
      const lines: string[] = [];
      for (let i = 0; i < 400; i++) {
        const big = i === 200 ? 1_300_000 : rand(9000); // one line longer than the read buffer
        if (rand(3) === 0) lines.push(JSON.stringify({ type: 'user', message: { role: 'user', content: 'u'.repeat(big) } }));
        else
          lines.push(
            JSON.stringify({
              parentUuid: null,
              message: { id: `msg_${rand(150)}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'a'.repeat(big) }], usage: { input_tokens: rand(50), cache_creation_input_tokens: rand(900), cache_read_input_tokens: rand(5000), output_tokens: rand(300) } },
              requestId: `req_${rand(3)}`,
              type: 'assistant',
              uuid: `u${i}`,
            }),
          );
      }
      const file = join(tmp.path, `boundaries-${seed}.jsonl`);
      await write(file, lines.join('\n')); // no newline after the last line
      const [scanned] = (await scanFiles([file])).participants;
      const last = new Map<string, Record<string, number>>();
      for (const l of lines) {
        const r = JSON.parse(l) as { type: string; requestId?: string; message: { id: string; usage?: Record<string, number> } };
        if (r.type === 'assistant' && r.message.usage) last.set(`${r.message.id}\u0000${r.requestId ?? ''}`, r.message.usage);
      }
      const sum = (k: string) => [...last.values()].reduce((a, u) => a + (u[k] ?? 0), 0);
      expect(scanned!.messages).toBe(last.size);
      expect(scanned!.tokens).toEqual({ input: sum('input_tokens'), cache_creation: sum('cache_creation_input_tokens'), cache_read: sum('cache_read_input_tokens'), output: sum('output_tokens'), reasoning: 0 });
    }
  });
});

describe('redacted thinking (B4.2; real CLI 2.1.332, tests/fixtures/claude-code/redacted-thinking-2.1.332)', () => {
  it('stays in raw: its opaque data reaches neither the ACTF nor the SFT; the visible thinking is the reasoning', async () => {
    const native = join(repoRoot, 'tests/fixtures/claude-code/redacted-thinking-2.1.332');
    const opaque = 'RVRPUEFRVUUtUkVEQUNURUQtVEhJTktJTkctREFUQQ==';
    const { readdir } = await import('node:fs/promises');
    const session = join(native, 'projects', '-work', (await readdir(join(native, 'projects', '-work')))[0]!);
    expect(readFileSync(session, 'utf8')).toContain('"type":"redacted_thinking"'); // the CLI kept the block
    const out = join(tmp.path, 'redacted-out');
    const [s] = await convertNative({ harness: 'claude-code', native, out, keepThinking: true });
    expect(s!.sft).toEqual({ status: 'ok', reason: null });
    const files = (await readdir(out, { recursive: true })).map((f) => join(out, String(f))).filter((f) => /trace_(ACTF|SFT)\.json$/.test(f));
    expect(files.map((f) => f.split('/').pop()).sort()).toEqual(['trace_ACTF.json', 'trace_SFT.json']);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(text).not.toContain(opaque);
      expect(text).not.toContain('redacted_thinking');
    }
    const actf = JSON.parse(readFileSync(files.find((f) => f.endsWith('trace_ACTF.json'))!, 'utf8')) as Json;
    const last = (actf.steps as Json[]).at(-1)!;
    expect(last.assistant_content).toMatchObject({ reasoning_content: 'The visible part of the reasoning.', content: 'Done, with part of my reasoning redacted.' });
  });
});
