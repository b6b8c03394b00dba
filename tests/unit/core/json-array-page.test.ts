import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArrayPage } from '../../../src/core/json-array-page.js';
import { useTempDir } from '../../support/temp-dir.js';

describe('readArrayPage: one page of a JSON document array, read as tokens (stream-json)', () => {
  const tmp = useTempDir('array-page');
  const doc = { schema_version: 'v1', tools: [{ name: 'a', nested: { x: [1, 2] } }], steps: Array.from({ length: 25 }, (_, i) => ({ step_id: i, text: `s${i}`, calls: [{ id: i }], n: i * 1.5, flag: i % 2 === 0, none: null })), timing: { ms: 7 } };

  it('returns the same elements and members as JSON.parse, for every page, with the total once the read reaches the end', async () => {
    const path = join(tmp.path, 'doc.json');
    writeFileSync(path, JSON.stringify(doc, null, 1));
    for (const [offset, limit] of [[0, 10], [10, 10], [20, 10], [24, 1], [30, 5], [0, 25]] as const) {
      const page = await readArrayPage(path, 'steps', offset, limit);
      expect(page.items).toEqual(doc.steps.slice(offset, offset + limit));
      expect(page.more).toBe(offset + limit < 25);
      if (page.more) {
        expect(page.total).toBeNull();
        expect(page.head).toEqual({ schema_version: 'v1', tools: doc.tools });
      } else {
        expect(page.total).toBe(25);
        expect(page.head).toEqual({ schema_version: 'v1', tools: doc.tools, timing: doc.timing });
      }
    }
    const whole = await readArrayPage(path, 'steps', 0, 3, { toEnd: true });
    expect([whole.total, whole.more, whole.head.timing]).toEqual([25, true, doc.timing]);
  });

  it('a document without the array, or where it is not an array, has none; bad and cut JSON are typed errors naming the file', async () => {
    const path = join(tmp.path, 'other.json');
    writeFileSync(path, JSON.stringify({ a: 1, steps: null }));
    expect(await readArrayPage(path, 'steps', 0, 5)).toEqual({ head: { a: 1, steps: null }, items: [], more: false, total: 0 });
    writeFileSync(path, '[1, 2]');
    await expect(readArrayPage(path, 'steps', 0, 5)).rejects.toThrow(`${path}: not a JSON object`);
    writeFileSync(path, '{"steps": [1, 2,');
    await expect(readArrayPage(path, 'steps', 0, 5, { toEnd: true })).rejects.toThrow(path);
    writeFileSync(path, '{"steps": [1, }');
    await expect(readArrayPage(path, 'steps', 0, 5)).rejects.toThrow(`${path}: not valid JSON`);
  });
});
