import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRollerError } from '../../../src/core/errors.js';
import { acquireLock, inspectLock, processStart } from '../../../src/core/process-lock.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('process-lock');
const options = { what: 'the run r', command: 'test', takeOverStale: false, staleHint: 'pass --resume' };

/** A pid that was a process a moment ago and is gone now (a child that exited). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('process lock (a run held by one process at a time)', () => {
  it('is taken exclusively, names pid, host and start, and is gone once released', async () => {
    const path = join(tmp.path, 'a.lock');
    const held = await acquireLock(path, options);
    const holder = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(holder).toMatchObject({ pid: process.pid, host: hostname(), command: 'test', process_start: processStart(process.pid) });
    const second = await acquireLock(path, { ...options, takeOverStale: true }).catch((e: unknown) => e);
    expect(isRollerError(second, 'ROLLER_RUN_LOCKED')).toBe(true);
    expect((second as Error).message).toContain(`the run r is in use by pid ${process.pid} on ${hostname()}`);
    await held.release();
    expect(existsSync(path)).toBe(false);
  });

  it('a lock whose process is gone is stale: refused without takeover, taken over with it, handed back when asked', async () => {
    const path = join(tmp.path, 'stale.lock');
    const gone = { pid: deadPid(), host: hostname(), started_at: '2026-12-01T00:00:00.000Z', process_start: '1', command: 'roller collect' };
    writeFileSync(path, JSON.stringify(gone));
    expect((await inspectLock(path))?.alive).toBe('gone');
    const refused = await acquireLock(path, options).catch((e: unknown) => e);
    expect((refused as Error).message).toContain(`the run r was left by pid ${gone.pid} on ${hostname()} since 2026-12-01T00:00:00.000Z (roller collect), which is gone (killed?); pass --resume`);
    const held = await acquireLock(path, { ...options, takeOverStale: true });
    expect(held.tookOver).toEqual(gone);
    await held.release({ handBack: true });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(gone);
  });

  it('a reused pid is not the holder (its start time differs); another host cannot be checked; a damaged lock holds nothing', async () => {
    const reused = join(tmp.path, 'reused.lock');
    writeFileSync(reused, JSON.stringify({ pid: process.pid, host: hostname(), started_at: 'x', process_start: 'not-this-one', command: 'c' }));
    expect((await inspectLock(reused))?.alive).toBe('gone');
    const remote = join(tmp.path, 'remote.lock');
    writeFileSync(remote, JSON.stringify({ pid: 1, host: 'another-host.example', started_at: 'x', process_start: null, command: 'c' }));
    expect((await inspectLock(remote))?.alive).toBe('unknown');
    const err = await acquireLock(remote, { ...options, takeOverStale: true }).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`which cannot be checked from here; if that process is gone, remove ${remote}`);
    const damaged = join(tmp.path, 'damaged.lock');
    writeFileSync(damaged, '{"pid": 12');
    expect((await inspectLock(damaged))?.alive).toBe('gone');
  });
});
