import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { summarizeCalls } from '../../examples/highland-pipeline.js';

it('the library example (docs/library.md, examples/highland-pipeline.ts) runs as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'roller-example-'));
  try {
    const input = join(dir, 'calls.jsonl');
    await writeFile(
      input,
      [
        { call_id: 'c1', http_status: 200, usage: { normalized: { output: 12 } } },
        { call_id: 'c2', http_status: 529 },
        { call_id: 'c3', http_status: 200, usage: { normalized: null } },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const report = await summarizeCalls(input, join(dir, 'a.jsonl'), join(dir, 'b.jsonl'));
    const expected = '{"call_id":"c1","output_tokens":12}\n{"call_id":"c3","output_tokens":0}\n';
    expect(await readFile(join(dir, 'a.jsonl'), 'utf8')).toBe(expected);
    expect(await readFile(join(dir, 'b.jsonl'), 'utf8')).toBe(expected);
    expect(report.received).toBe(2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
