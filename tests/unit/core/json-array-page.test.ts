import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { arrayMemberElements, readArrayPage } from '../../../src/core/json-array-page.js';
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
    expect(await readArrayPage(path, 'steps', 0, 5)).toEqual({ head: { a: 1, steps: null }, items: [], more: false, total: 0, found: false });
    writeFileSync(path, '[1, 2]');
    await expect(readArrayPage(path, 'steps', 0, 5)).rejects.toThrow(`${path}: not a JSON object`);
    writeFileSync(path, '{"steps": [1, 2,');
    await expect(readArrayPage(path, 'steps', 0, 5, { toEnd: true })).rejects.toThrow(path);
    writeFileSync(path, '{"steps": [1, }');
    await expect(readArrayPage(path, 'steps', 0, 5)).rejects.toThrow(`${path}: not valid JSON`);
  });
});

describe('arrayMemberElements: the elements of a document array one at a time, in order (stream-json pick + streamArray)', () => {
  const tmp = useTempDir('array-elements');
  const collect = async (path: string, key: string) => {
    const out: unknown[] = [];
    for await (const v of arrayMemberElements(path, key)) out.push(v);
    return out;
  };

  it('gives what JSON.parse gives, whatever sits around the array or inside its elements', async () => {
    const doc = { samples_note: 'x', summary: { samples: [9, 9] }, samples: Array.from({ length: 1200 }, (_, i) => ({ index: i, path: `s/${i}`, usage: i % 3 ? null : { input: i, nested: [[i], { samples: [i] }] }, text: 'é\n"' })), errors: [{ code: 'E' }] };
    const path = join(tmp.path, 'run.json');
    writeFileSync(path, JSON.stringify(doc));
    expect(await collect(path, 'samples')).toEqual(doc.samples);
    expect(await collect(path, 'errors')).toEqual(doc.errors);
    expect(await collect(path, 'absent')).toEqual([]);
  });

  it('a document cut inside the array gives the elements before the cut, then a typed error naming the file', async () => {
    const path = join(tmp.path, 'cut.json');
    writeFileSync(path, JSON.stringify({ samples: [{ a: 1 }, { a: 2 }, { a: 3 }] }).slice(0, 24));
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const v of arrayMemberElements(path, 'samples')) seen.push(v);
      })(),
    ).rejects.toMatchObject({ code: 'ROLLER_JSON_INVALID', message: expect.stringContaining(path) });
    expect(seen).toEqual([{ a: 1 }]);
  });
});
