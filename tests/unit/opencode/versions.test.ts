import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
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
  it.each(['1.3.2', '1.14.34', '1.18.33'])('%s: output counts the reasoning once, whichever way the release stored it', async (version) => {
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
    expect((err as Error).message).toMatch(/is of type "hologram", which no verified release wrote \(written by OpenCode 1\.17\.0\); roller reads the stores of OpenCode 1\.2\.6 to 1\.18\.33/);
  });
});
