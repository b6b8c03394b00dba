import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openCodeParticipants } from '../../../src/harnesses/opencode/participants.js';
import { readOpenCodeStoreAt } from '../../../src/harnesses/opencode/store.js';
import { opencodePlan } from '../../../src/harnesses/opencode/launch.js';
import { convertNative } from '../../../src/pipelines/convert.js';
import type { Call } from '../../../src/schemas/call.js';
import { useTempDir } from '../../support/temp-dir.js';

/** OpenCode stores of the version matrix (tests/fixtures/versions/opencode: the real CLIs on the scripted model). */
const VERSIONS = join(import.meta.dirname, '..', '..', 'fixtures', 'versions', 'opencode');
const tmp = useTempDir('opencode-versions');
const dataDir = (dir: string) => join(dir, 'native', '.local', 'share', 'opencode');

/** A copy of a fixture's store, changed with SQL (a shape or a field no release wrote). */
function editedStore(version: string, name: string, edit: (db: Database.Database) => void): string {
  const from = dataDir(join(VERSIONS, version, 'a-tool-call'));
  const to = join(tmp.path, name);
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) copyFileSync(join(from, f), join(to, f));
  const db = new Database(join(to, 'opencode.db'));
  edit(db);
  db.close();
  return to;
}
const sentOf = (dir: string) =>
  readFileSync(join(dir, 'calls.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Call)
    .filter((c) => Array.isArray((c.context as { tools?: unknown } | null)?.tools)) // title requests write no message
    .reduce((a, c) => ({ output: a.output + c.usage.normalized!.output, reasoning: a.reasoning + c.usage.normalized!.reasoning }), { output: 0, reasoning: 0 });

describe('OpenCode across releases', () => {
  it.each(['1.1.11', '1.1.65', '1.3.2', '1.14.34', '1.18.33'])('%s: output counts the reasoning once, whichever way the release stored it', async (version) => {
    const dir = join(VERSIONS, version, 'a-tool-call');
    const sent = sentOf(dir);
    expect(sent.reasoning).toBeGreaterThan(0);
    const [root] = (await convertNative({ harness: 'opencode', native: dataDir(dir), out: join(tmp.path, version), keepThinking: true }))[0]!.participants;
    expect({ output: root!.tokens.output, reasoning: root!.tokens.reasoning }).toEqual(sent);
    expect(root!.unknown_kinds).toBeUndefined();
  });

  it('a session that names no release: the output of a message that reasoned is unknown, never guessed', async () => {
    const to = editedStore('1.18.33', 'no-version', (db) => db.prepare("update session set version = ''").run());
    const [root] = (await convertNative({ harness: 'opencode', native: to, out: join(tmp.path, 'nv-out'), keepThinking: true }))[0]!.participants;
    expect(root!.unknown_kinds).toEqual(['output']);
    expect(root!.tokens_note).toMatch(/names no release.*unknown, not guessed/);
  });

  it('a part type no release wrote fails loudly: the database, the part, its type and the release its session names', async () => {
    let part = { id: '' };
    const to = editedStore('1.17.0', 'unknown-part', (db) => {
      part = db.prepare("select id from part where json_extract(data, '$.type') = 'step-start' limit 1").get() as { id: string };
      db.prepare("update part set data = json_set(data, '$.type', 'hologram') where id = ?").run(part.id);
    });
    const err = await convertNative({ harness: 'opencode', native: to, out: join(tmp.path, 'up-out'), keepThinking: true }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ROLLER_NATIVE_SHAPE_UNKNOWN');
    expect((err as Error).message).toContain(`part ${part.id}`);
    expect((err as Error).message).toMatch(/is of type "hologram", which no verified release wrote \(written by OpenCode 1\.17\.0\); roller reads the stores of OpenCode 1\.1\.11 to 1\.18\.33/);
  });
});

describe('OpenCode before 1.2: the JSON storage (one file per session, message and part)', () => {
  const subAgent = join(VERSIONS, '1.1.65', 'a-single-sub-agent');
  /** A copy of a fixture's storage directory, to change. */
  const storageCopy = (name: string) => {
    const to = join(tmp.path, name);
    cpSync(join(dataDir(subAgent), 'storage'), to, { recursive: true });
    return to;
  };

  it('reads sessions, messages and parts from the files: the child session, its spawning task call, every token the server sent', async () => {
    const store = readOpenCodeStoreAt(join(subAgent, 'native'));
    expect(store.path.endsWith('storage')).toBe(true);
    expect(store.sessions.map((s) => (s.parentId === null ? 'root' : s.parentId === store.sessions[0]!.id ? 'child' : '?'))).toEqual(['root', 'child']);
    expect(store.files!.length).toBe(store.sessions.length + store.messages.length + store.parts.length);
    const [root, child] = openCodeParticipants(store);
    expect(child).toMatchObject({ role: 'child', parent: root!.participant, depth: 1, status: 'completed', spawn_tool_call_id: expect.stringMatching(/^call_/) });
    // No session header before 1.17: the calls cannot be told apart by session, but together they are every token.
    const calls = readFileSync(join(subAgent, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call).filter((c) => Array.isArray((c.context as { tools?: unknown } | null)?.tools));
    const sum = (f: (t: Record<string, number>) => number, xs: Record<string, number>[]) => xs.reduce((a, t) => a + f(t), 0);
    const sent = calls.map((c) => c.usage.normalized as unknown as Record<string, number>);
    const stored = [root!.tokens, child!.tokens] as unknown as Record<string, number>[];
    expect(sum((t) => t.output!, stored)).toBe(sum((t) => t.output!, sent));
    expect(sum((t) => t.cache_read!, stored)).toBe(sum((t) => t.cached_input ?? t.cache_read!, sent));
    const [converted] = await convertNative({ harness: 'opencode', native: join(subAgent, 'native'), out: join(tmp.path, 'json-out'), keepThinking: true });
    expect(converted!.participants).toHaveLength(2);
  });

  it('a file cut short (OpenCode stopped mid-write) fails loudly, naming the file', async () => {
    const to = storageCopy('cut');
    const dir = join(to, 'part', readdirSync(join(to, 'part'))[0]!);
    const file = join(dir, readdirSync(dir)[0]!);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 40));
    const err = await convertNative({ harness: 'opencode', native: to, out: join(tmp.path, 'cut-out'), keepThinking: true }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ROLLER_NATIVE_SHAPE_UNKNOWN');
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/not a JSON object .*stopped while writing it/);
  });

  it('a part type no release wrote fails loudly, with the release its session names', async () => {
    const to = storageCopy('hologram');
    const dir = join(to, 'part', readdirSync(join(to, 'part'))[0]!);
    const file = join(dir, readdirSync(dir)[0]!);
    const part = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...part, type: 'hologram' }));
    const err = await convertNative({ harness: 'opencode', native: to, out: join(tmp.path, 'holo-out'), keepThinking: true }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ROLLER_NATIVE_SHAPE_UNKNOWN');
    expect((err as Error).message).toMatch(new RegExp(`part ${part.id as string} .*"hologram".*written by OpenCode 1\\.1\\.65`));
  });

  it('a link inside the storage is never followed: what it points to is not read', () => {
    const to = storageCopy('linked');
    const outside = join(tmp.path, 'outside.json');
    writeFileSync(outside, JSON.stringify({ id: 'prt_outside', sessionID: 'x', messageID: 'y', type: 'text', text: 'not the session' }));
    const dir = join(to, 'part', readdirSync(join(to, 'part'))[0]!);
    symlinkSync(outside, join(dir, 'prt_zzz.json'));
    symlinkSync(join(tmp.path), join(to, 'part', 'msg_linked_dir'));
    const store = readOpenCodeStoreAt(to);
    expect(store.parts.some((p) => p.id === 'prt_outside')).toBe(false);
    expect(store.files!.some((f) => f.includes('prt_zzz') || f.includes('msg_linked_dir'))).toBe(false);
    expect(store.parts).toHaveLength(readOpenCodeStoreAt(join(subAgent, 'native')).parts.length);
  });
});

describe('OpenCode launch plans follow the release', () => {
  /** Runs a release's plan with a stand-in CLI that logs how it was started (the real one runs in `roller verify`). */
  function launched(version: string) {
    const dir = join(tmp.path, `plan-${version}`);
    mkdirSync(join(dir, 'work'), { recursive: true });
    const bin = join(dir, 'opencode');
    writeFileSync(bin, `#!/bin/sh\necho "$*" >> "${dir}/started"\n`);
    chmodSync(bin, 0o755);
    const home = join(dir, 'home');
    return opencodePlan({ bin, prompt: 'p', home, work: join(dir, 'work'), baseUrl: 'http://127.0.0.1:9', apiKey: 'k', version }).then((plan) => {
      expect(spawnSync(plan.command, plan.args, { env: plan.env, cwd: plan.cwd }).status).toBe(0);
      return { started: readFileSync(join(dir, 'started'), 'utf8').trim().split('\n'), models: join(home, '.cache', 'opencode', 'models.json') };
    });
  }

  it('1.1.27 to 1.1.34: started once with --version (its cache set up), then an empty model list, then the run', async () => {
    const { started, models } = await launched('1.1.27');
    expect(started).toEqual(['--version', 'run --format json']);
    expect(readFileSync(models, 'utf8')).toBe('{}');
  });

  it.each(['1.1.11', '1.1.53', '1.18.33'])('%s: the run alone, nothing seeded', async (version) => {
    const { started, models } = await launched(version);
    expect(started).toEqual(['run --format json']);
    expect(existsSync(models)).toBe(false);
  });
});

