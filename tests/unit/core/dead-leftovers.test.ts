/**
 * What a killed roller leaves half-made is found by the PID in its name: removed when that process is gone, kept while
 * it lives (real processes: one exited, one still running). collect and reprocess sweep their run's root this way.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDirectory } from '../../../src/core/built-directory.js';
import { removeDeadTempsIn } from '../../../src/core/dead-leftovers.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('dead-leftovers');
const gone = spawnSync('true').pid!;
const living = spawn('sleep', ['60']);
afterAll(() => void living.kill('SIGKILL'));

describe('leftovers of dead processes', () => {
  it("removes a dead writer's NAME.PID.tmp and .NAME.PID.HEX.tmp, keeps a living one's and every other file", async () => {
    const dir = join(tmp.path, 'temps');
    mkdirSync(dir);
    const names = [`sft.jsonl.${gone}.tmp`, `.info.json.${gone}.a1b2c3d4e5f6.tmp`, `sft.jsonl.${living.pid}.tmp`, 'sft.jsonl', 'notes.tmp', `info.json.${gone}`];
    for (const n of names) writeFileSync(join(dir, n), 'x');
    expect((await removeDeadTempsIn(dir)).map((p) => p.slice(dir.length + 1)).sort()).toEqual([`.info.json.${gone}.a1b2c3d4e5f6.tmp`, `sft.jsonl.${gone}.tmp`]);
    expect(readdirSync(dir).sort()).toEqual([`info.json.${gone}`, 'notes.tmp', `sft.jsonl.${living.pid}.tmp`, 'sft.jsonl'].sort());
  });

  it("the next build of a directory takes a dead build's OUT.building-PID away, not a living one's", async () => {
    const dir = join(tmp.path, 'next');
    mkdirSync(dir);
    mkdirSync(join(dir, `hf.building-${gone}`));
    mkdirSync(join(dir, `hf.building-${living.pid}`));
    await buildDirectory(join(dir, 'hf'), 'the dataset', async (building) => writeFileSync(join(building, 'a'), 'a'));
    expect(readdirSync(dir).sort()).toEqual(['hf', `hf.building-${living.pid}`]);
    expect(existsSync(join(dir, 'hf', 'a'))).toBe(true);
  });
});
