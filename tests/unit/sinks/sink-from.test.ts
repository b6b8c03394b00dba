import { createRequire } from 'node:module';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createStageContext } from '../../../src/core/context.js';
import { openUserSinks, sinkSpecs } from '../../../src/pipelines/user-sinks.js';
import { sinkFrom } from '../../../src/sinks/user-sink.js';
import { describeSinkConformance } from '../../../src/testing/index.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('sink-from');

/** A store of the sink's own (not env.open): what a database sink is to the suite. */
const stores = new Map<string, { rows: number[]; closed: boolean }>();

describeSinkConformance<number>('sinkFrom, writing a store of its own', {
  outputs: 'own',
  create: (env) => {
    const store = { rows: [] as number[], closed: false };
    stores.set(env.dir, store);
    return sinkFrom<number>(
      'rows',
      async (items) => {
        for await (const n of items) store.rows.push(n);
      },
      { close: () => void (store.closed = true) },
    );
  },
  item: (i) => i,
  readBack: async (env) => stores.get(env.dir)?.rows ?? [],
  expected: (items) => items,
  capacity: 1,
  isClosed: (env) => stores.get(env.dir)!.closed,
});

describe('sinkFrom', () => {
  it('pulls one item per turn of the loop: a loop that stops after N items lets the source produce N + 1 at most', async () => {
    let produced = 0;
    async function* source() {
      for (let i = 0; i < 1000; i++) {
        produced++;
        yield i;
      }
    }
    const controller = new AbortController();
    const sink = sinkFrom<number>('stuck', async (items) => {
      let n = 0;
      for await (const _ of items) if (++n === 5) await new Promise(() => {}); // its destination hangs
    });
    const running = sink.consume(source(), createStageContext({ signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 100));
    expect(produced).toBeLessThanOrEqual(6);
    controller.abort(new Error('stop'));
    // The loop itself hangs on its destination: the abort reaches it through the signal it was given, not the items.
    await Promise.race([running.catch(() => {}), new Promise((r) => setTimeout(r, 50))]);
  });

  it('an input error reaches the loop as a throw; close runs with it; consume rejects with it', async () => {
    let closedWith: unknown = 'not closed';
    async function* failing() {
      yield 1;
      throw new Error('input broke');
    }
    const sink = sinkFrom<number>('s', async (items) => {
      for await (const _ of items);
    }, { close: (err) => void (closedWith = err) });
    await expect(sink.consume(failing(), createStageContext())).rejects.toThrow('input broke');
    expect((closedWith as Error).message).toBe('input broke');
  });
});

describe('--sink-option by the name a module declares', () => {
  const zodUrl = pathToFileURL(createRequire(import.meta.url).resolve('zod')).href;
  async function moduleFile(): Promise<string> {
    const file = join(tmp.path, 'file-name.mjs');
    await writeFile(
      file,
      `import { z } from '${zodUrl}';
export default { name: 'declared', options: z.strictObject({ path: z.string() }), create: ({ path }) => ({ calls: { name: 'declared', async consume(input) { for await (const _ of input); globalThis.__sinkPath = path; return { name: 'declared', received: 0, written: 0 }; } } }) };
`,
    );
    return file;
  }

  it.each(['declared', 'file-name'])('options given as %s.path reach it', async (name) => {
    const file = await moduleFile();
    const set = await openUserSinks(sinkSpecs([file], [`${name}.path=/x/${name}`]));
    expect(set.names).toEqual(['declared']);
    await set.end();
    expect((globalThis as { __sinkPath?: string }).__sinkPath).toBe(`/x/${name}`);
  });

  it('options for a name no sink answers to: refused, naming it and the sinks there are', async () => {
    const file = await moduleFile();
    await expect(openUserSinks(sinkSpecs([file], ['declared.path=/x', 'nope.k=1']))).rejects.toMatchObject({
      code: 'ROLLER_INVALID_OPTIONS',
      message: "options for 'nope', but no --sink of that name (sinks: declared)",
    });
  });
});

describe('roller sinks', () => {
  it('lists every registered sink with its options, read from its schema', async () => {
    const { listSinks } = await import('../../../src/pipelines/list-sinks.js');
    const { sinks } = await import('../../../src/sinks/index.js');
    const listed = listSinks();
    expect(listed.map((s) => s.name)).toEqual(Object.keys(sinks));
    expect(listed.find((s) => s.name === 'calls-jsonl')).toMatchObject({ input: 'calls', runSink: true, options: expect.arrayContaining([{ name: 'path', type: 'string', required: true, description: 'calls.jsonl path' }]) });
    expect(listed.find((s) => s.name === 'actf')).toMatchObject({ runSink: false });
  });
});
