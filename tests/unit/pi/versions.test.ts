import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertNative } from '../../../src/pipelines/convert.js';
import type { Call } from '../../../src/schemas/call.js';
import { useTempDir } from '../../support/temp-dir.js';

/** Pi sessions of the version matrix (tests/fixtures/versions/pi: the real CLIs on the scripted model). */
const VERSIONS = join(import.meta.dirname, '..', '..', 'fixtures', 'versions', 'pi');
const tmp = useTempDir('pi-versions');
// The fixture keeps only the names of the tools a call offered: no tool schemas to convert from, so none are given.
const callsOf = (dir: string) => readFileSync(join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => ({ ...(JSON.parse(l) as Call), context: null }));

describe('Pi across releases', () => {
  it.each(['0.67.1', '0.73.1'])('%s: where the model reasoned, output and reasoning are unknown from the files alone and exact from the capture', async (version) => {
    const dir = join(VERSIONS, version, 'a-tool-call');
    const calls = callsOf(dir);
    const sent = calls.reduce((a, c) => ({ output: a.output + (c.usage.normalized?.output ?? 0), reasoning: a.reasoning + (c.usage.normalized?.reasoning ?? 0) }), { output: 0, reasoning: 0 });
    expect(sent.reasoning).toBeGreaterThan(0);
    const [alone] = (await convertNative({ harness: 'pi', native: join(dir, 'native'), out: join(tmp.path, `${version}-a`), keepThinking: true }))[0]!.participants;
    expect(alone!.unknown_kinds).toEqual(['output', 'reasoning']);
    expect(alone!.tokens_note).toMatch(/0\.60-0\.67 add it again/);
    // 0.67 recorded the reasoning twice in its output, 0.73 once: the files alone cannot tell which (hence unknown).
    expect(alone!.tokens.output).toBe(version === '0.67.1' ? sent.output + sent.reasoning : sent.output);
    const [wired] = (await convertNative({ harness: 'pi', native: join(dir, 'native'), out: join(tmp.path, `${version}-w`), keepThinking: true, calls }))[0]!.participants;
    expect(wired!.unknown_kinds).toBeUndefined();
    expect({ output: wired!.tokens.output, reasoning: wired!.tokens.reasoning }).toEqual(sent);
  });

  it('an entry type no release wrote fails loudly: file, line, type and the session format', async () => {
    const dir = join(VERSIONS, '0.73.1', 'a-tool-call');
    const sessions = join(dir, 'native', '.pi', 'agent', 'sessions');
    const project = readdirSync(sessions)[0]!;
    const name = readdirSync(join(sessions, project))[0]!;
    const lines = readFileSync(join(sessions, project, name), 'utf8').split('\n').filter(Boolean);
    lines.splice(2, 0, JSON.stringify({ type: 'hologram', id: 'h1', parentId: null, timestamp: '2026-12-03T00:00:00Z' }));
    const copy = join(tmp.path, 'unknown-entry.jsonl');
    writeFileSync(copy, `${lines.join('\n')}\n`);
    const err = await convertNative({ harness: 'pi', native: copy, out: join(tmp.path, 'ue-out'), keepThinking: true }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ROLLER_NATIVE_SHAPE_UNKNOWN');
    expect((err as Error).message).toMatch(/unknown-entry\.jsonl:3: a 'hologram' entry of a type no verified release wrote \(session format 3; Pi's files name no release\); roller reads Pi /);
  });

  it('0.27.9 writes session format 1 (a linear list without ids): read whole, kept as written, its calls its own by its proxy', async () => {
    const dir = join(VERSIONS, '0.27.9', 'a-tool-call');
    const sessions = join(dir, 'native', '.pi', 'agent', 'sessions');
    const project = readdirSync(sessions)[0]!;
    const file = join(sessions, project, readdirSync(join(sessions, project))[0]!);
    const written = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(written[0]!.version).toBeUndefined();
    expect(written.some((r) => 'id' in r && r.type === 'message')).toBe(false);
    const [s] = await convertNative({ harness: 'pi', native: join(dir, 'native'), out: join(tmp.path, 'v1'), keepThinking: true });
    expect(s!.steps).toBe(written.filter((r) => r.type === 'message' && (r.message as { role?: string }).role === 'assistant').length);
    const trace = readFileSync(join(tmp.path, 'v1', 'trace.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
    expect(trace).toEqual(written);
    const calls = callsOf(dir);
    const root = s!.participants[0]!;
    expect(root.message_ids).toEqual([]);
    expect(root.tokens.input + root.tokens.cache_read).toBe(calls.reduce((a, c) => a + c.usage.normalized!.input + c.usage.normalized!.cached_input, 0));
  });
});
