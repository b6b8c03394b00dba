/**
 * What a killed run left is removed by the --resume; a temporary directory that cannot be removed (a process of the
 * killed run still holding it) is said, never a crash — the resume goes on.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTEMPT_DIR_PREFIX, cleanLeftovers } from '../../src/pipelines/collect/run-dir.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('run-dir-leftovers');
const root = process.getuid?.() === 0;
const undo: (() => void)[] = [];
afterEach(async () => {
  for (const f of undo.splice(0)) f();
});

/** A run directory noting one attempt whose temporary directory (under the system's temp dir) holds a file. */
function killedRun(name: string): { runDir: string; scratch: string; held: string } {
  const runDir = join(tmp.path, name);
  const scratch = mkdtempSync(join(tmpdir(), `${ATTEMPT_DIR_PREFIX}0-`));
  undo.push(() => void rm(scratch, { recursive: true, force: true }));
  const held = join(scratch, 'home', 'projects');
  mkdirSync(held, { recursive: true });
  writeFileSync(join(held, 'session.jsonl'), '{}\n');
  mkdirSync(join(runDir, '.running'), { recursive: true });
  writeFileSync(join(runDir, '.running', '0.json'), JSON.stringify({ index: 0, attempt: 1, runtime: scratch, pid: 1, started_at: 'x' }));
  return { runDir, scratch, held };
}

describe('cleanLeftovers', () => {
  it('removes the noted temporary directory and the notes', async () => {
    const { runDir, scratch } = killedRun('plain');
    expect(await cleanLeftovers(runDir)).toEqual([scratch]);
    expect(existsSync(scratch)).toBe(false);
    expect(existsSync(join(runDir, '.running'))).toBe(false);
  });

  it('a directory it cannot remove is named in a notice, and the resume goes on', async () => {
    const { runDir, scratch, held } = killedRun('held');
    // Root deletes anything writable: an immutable file holds the directory; anyone else, a read-only directory.
    if (root) {
      execFileSync('chattr', ['+i', join(held, 'session.jsonl')]);
      undo.unshift(() => execFileSync('chattr', ['-i', join(held, 'session.jsonl')]));
    } else {
      chmodSync(held, 0o500);
      undo.unshift(() => chmodSync(held, 0o700));
    }
    const notices: string[] = [];
    expect(await cleanLeftovers(runDir, (m) => notices.push(m))).toEqual([]);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(scratch);
    expect(notices[0]).toContain('remove it by hand');
    expect(existsSync(join(runDir, '.running'))).toBe(false);
  });
});
