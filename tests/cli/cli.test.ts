import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { recordTypes } from '../../src/schemas/index.js';
import { atifFixture, rollerBin } from '../support/paths.js';

const run = promisify(execFile);

async function roller(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(rollerBin, args);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('cli');

describe('roller CLI (bin/roller over dist/)', () => {
  it('schema --out writes one JSON Schema per record type', async () => {
    const out = join(tmp.path, 'schemas');
    const res = await roller('schema', '--out', out);
    expect(res.code).toBe(0);
    const files = (await readdir(out)).sort();
    expect(files).toEqual(Object.keys(recordTypes).map((n) => `${n}.schema.json`).sort());
    for (const f of files) {
      const doc = JSON.parse(await readFile(join(out, f), 'utf8')) as Record<string, unknown>;
      expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(doc.title).toBe(f.replace('.schema.json', ''));
    }
  });

  it('validate passes the ATIF RFC example', async () => {
    const res = await roller('validate', '--schema', 'atif', atifFixture);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`ok ${atifFixture} (1 record)`);
  });

  it('validate reports a broken ATIF copy with file, line and JSON path', async () => {
    const doc = JSON.parse(await readFile(atifFixture, 'utf8')) as { steps: { step_id: number; source: string; observation?: unknown }[] };
    // A tool result in the final agent step that points at a call of step 2.
    const last = doc.steps.at(-1)!;
    last.observation = { results: [{ source_call_id: 'call_price_1', content: 'moved' }] };
    const broken = join(tmp.path, 'broken.trajectory.json');
    const text = JSON.stringify(doc, null, 2);
    await writeFile(broken, text);
    const res = await roller('validate', '--schema', 'atif', broken);
    expect(res.code).toBe(1);
    const i = doc.steps.length - 1;
    expect(res.stdout).toMatch(
      new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: \\$\\.steps\\[${i}\\]\\.observation\\.results\\[0\\]\\.source_call_id: Observation result references source_call_id 'call_price_1'`, 'm'),
    );
    // The line named is the offending value in the file (the moved result, not the original call).
    const reported = Number(/broken\.trajectory\.json:(\d+):/.exec(res.stdout)![1]);
    const lines = text.split('\n');
    expect(lines[reported - 1]).toContain('"source_call_id": "call_price_1"');
    expect(lines[reported]).toContain('"content": "moved"');
    expect(res.stdout).toContain(`FAIL ${broken} (1 error)`);
  });

  it('validate checks JSONL line by line, naming the line of each bad record and keeping on', async () => {
    const tasks = join(tmp.path, 'tasks.jsonl');
    await writeFile(tasks, ['{"id":"a","prompt":"p"}', '{"id":"b","promt":"typo"}', '{not json', '{"id":"d","prompt":"p"}', ''].join('\n'));
    const res = await roller('validate', '--schema', 'task', tasks);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`${tasks}:2: $.prompt:`);
    expect(res.stdout).toContain(`${tasks}:2: $.promt: unexpected field`);
    expect(res.stdout).toContain(`${tasks}:3: not valid JSON`);
    expect(res.stdout).toContain(`FAIL ${tasks} (3 errors)`);
    expect(res.stderr).toContain('1 files, 3 records, 3 errors'); // the unparseable line is not a record
  });

  it('an unknown schema name is a usage error that lists the known ones', async () => {
    const res = await roller('validate', '--schema', 'atfi', atifFixture);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('unknown record type; one of: call, relation');
  });

  it('`roller validate ... | head -1` exits 0 on the broken pipe, without a stack trace', () => {
    const many = Array.from({ length: 3000 }, () => atifFixture);
    const list = join(tmp.path, 'args.txt');
    writeFileSync(list, many.join('\n'));
    const res = spawnSync('bash', ['-c', `"${rollerBin}" validate --schema atif $(cat "${list}") | head -1; echo "status=\${PIPESTATUS[0]}" >&2`], {
      encoding: 'utf8',
    });
    expect(res.stdout.trim().split('\n')).toEqual([`ok ${atifFixture} (1 record)`]);
    expect(res.stderr).toContain('status=0');
    expect(res.stderr).not.toMatch(/EPIPE|Error|at /);
  });
});
