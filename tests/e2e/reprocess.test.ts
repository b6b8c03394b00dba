/**
 * `roller reprocess` on real archives (Claude Code runs on the scripted model, captures with raw/ kept): a
 * corrupt sample in the middle of a run is an error row while the others are written; a second run writes
 * nothing; earlier unfinished outputs are reported by path, never overwritten; --only keeps the other
 * families as the archive has them; a sample without an archive says why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunInfo } from '../../src/schemas/index.js';
import { repoRoot, rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('reprocess');

function roller(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
}

type Report = { rows: { sample: string; status: string; error?: { code: string; message: string } }[]; written: number; unchanged: number; errors: number; wroteRunFiles: boolean };
const json = (r: { stdout: string }) => JSON.parse(r.stdout) as Report;

describe('roller reprocess (archives of real Claude Code runs)', () => {
  let archive = '';
  beforeAll(async () => {
    const r = await roller(['collect', '--capture-calls', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--output', join(tmp.path, 'runs'), '--run-name', 'demo', '--capture-debug', 'full']);
    expect(r.code, r.stderr).toBe(0);
    archive = join(tmp.path, 'runs', 'demo');
  }, 10 * 60_000);

  it('a corrupt sample in the middle is an error row; every other sample is written; the input is untouched', async () => {
    const copy = join(tmp.path, 'corrupt');
    cpSync(archive, copy, { recursive: true });
    const rows = (JSON.parse(readFileSync(join(copy, 'info.json'), 'utf8')) as RunInfo).samples;
    const middle = rows[1]!;
    const calls = join(copy, middle.path, 'capture', 'attempt-0001', 'calls.jsonl');
    appendFileSync(calls, '{"schema":"roller.call/v1","call_id":'); // a line cut short
    const before = readFileSync(calls);

    const out = join(tmp.path, 'out-corrupt');
    const r = await roller(['reprocess', copy, '--output', out, '--concurrency', '2', '--json']);
    expect(r.code).toBe(1);
    const report = json(r);
    expect(report).toMatchObject({ written: 2, errors: 1 });
    const bad = report.rows.find((x) => x.status === 'error')!;
    expect(bad.sample).toBe(middle.path);
    expect(bad.error!.message).toMatch(/calls\.jsonl:\d+: /);
    expect(existsSync(join(out, middle.path))).toBe(false);
    expect(existsSync(join(out, `${middle.path}.partial`))).toBe(false);
    for (const row of [rows[0]!, rows[2]!]) expect(existsSync(join(out, row.path, 'trace_ACTF.json'))).toBe(true);
    // The run's files say what happened: the failed sample an error row (its directory absent), sft.jsonl of the two
    // written; validate-run names the failed one.
    const info = JSON.parse(readFileSync(join(out, 'info.json'), 'utf8')) as RunInfo;
    expect(info.samples.map((s) => [s.path, s.status])).toEqual([[rows[0]!.path, 'ok'], [middle.path, 'error'], [rows[2]!.path, 'ok']]);
    expect(info.summary).toMatchObject({ ok: 2, error: 1 });
    expect(readFileSync(join(out, 'sft.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    expect(readFileSync(calls).equals(before)).toBe(true);
    const checked = await roller(['validate-run', out]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(`${middle.path}: no sample directory; the run records it as error`);

    // The failed sample's record says so; fixing the archive and running again writes just that sample.
    const log = readFileSync(join(out, 'reprocess.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { sample: string; state: string });
    expect(log.filter((l) => l.sample === middle.path).map((l) => l.state)).toEqual(['started', 'failed']);
    writeFileSync(calls, before.subarray(0, before.lastIndexOf('\n') + 1));
    const again = json(await roller(['reprocess', copy, '--output', out, '--json']));
    expect(again).toMatchObject({ written: 1, unchanged: 2, errors: 0 });
    expect((JSON.parse(readFileSync(join(out, 'info.json'), 'utf8')) as RunInfo).summary).toMatchObject({ ok: 3, error: 0 });
    expect((await roller(['validate-run', out])).code).toBe(0);
  }, 5 * 60_000);

  it('idempotent: the same source again writes nothing; an unfinished earlier output is reported by path and left alone', async () => {
    const out = join(tmp.path, 'out-twice');
    expect((await roller(['reprocess', archive, '--output', out])).code).toBe(0);
    // What a reprocess killed while writing its run files left (its process gone) is removed by the next one.
    const dead = spawnSync('true').pid!;
    for (const f of [`sft.jsonl.${dead}.tmp`, `.info.json.${dead}.00aa11bb22cc.tmp`]) writeFileSync(join(out, f), 'half');
    const second = await roller(['reprocess', archive, '--output', out, '--json']);
    expect(json(second)).toMatchObject({ written: 0, unchanged: 3, errors: 0, wroteRunFiles: false });
    expect(readdirSync(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(second.stderr).toContain('nothing new was written');

    // A crash mid-sample leaves <sample>.partial: reported by path, not overwritten, the others unchanged.
    const rows = (JSON.parse(readFileSync(join(archive, 'info.json'), 'utf8')) as RunInfo).samples;
    const other = join(tmp.path, 'out-partial');
    mkdirSync(join(other, `${rows[0]!.path}.partial`), { recursive: true });
    writeFileSync(join(other, `${rows[0]!.path}.partial`, 'marker'), 'left by a crash');
    const r = json(await roller(['reprocess', archive, '--output', other, '--json']));
    expect(r).toMatchObject({ written: 2, errors: 1 });
    expect(r.rows.find((x) => x.status === 'error')!.error!.message).toContain(`${rows[0]!.path}.partial: an unfinished earlier output is there; it is not overwritten`);
    expect(readFileSync(join(other, `${rows[0]!.path}.partial`, 'marker'), 'utf8')).toBe('left by a crash');
  }, 5 * 60_000);

  it('--only capture keeps ACTF and SFT as the archive has them, bytes included; a sample dir works alone; output inside the input is refused', async () => {
    const rows = (JSON.parse(readFileSync(join(archive, 'info.json'), 'utf8')) as RunInfo).samples;
    const sample = join(archive, rows[2]!.path);
    const out = join(tmp.path, 'out-only');
    const r = await roller(['reprocess', sample, '--output', out, '--only', 'capture']);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ['trace.jsonl', 'trace_ACTF.json', 'trace_SFT.json', 'info.json']) expect(readFileSync(join(out, rows[2]!.path, f)).equals(readFileSync(join(sample, f))), f).toBe(true);
    expect(readdirSync(join(out, 'samples', rows[2]!.path.split('/')[1]!))).toEqual([rows[2]!.path.split('/')[2]]);

    const inside = await roller(['reprocess', archive, '--output', join(archive, 'again')]);
    expect(inside.code).not.toBe(0);
    expect(inside.stderr).toContain('is inside the archive');
    const bad = await roller(['reprocess', archive, '--output', join(tmp.path, 'x'), '--only', 'actf,zstd']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown zstd');
  }, 5 * 60_000);

  it('a sub-agent file gone from the archive: the child is missing and every total that leaves it out says so (seeds/004)', async () => {
    const copy = join(tmp.path, 'lost-child');
    cpSync(archive, copy, { recursive: true });
    const delegate = (JSON.parse(readFileSync(join(copy, 'info.json'), 'utf8')) as RunInfo).samples.find((r) => r.path.includes('delegate'))!;
    const lost: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (/^agent-.*\.jsonl$/.test(e.name) && d.includes(join('raw', 'native'))) lost.push(join(d, e.name));
      }
    };
    walk(join(copy, delegate.path, 'capture'));
    expect(lost).toHaveLength(1);
    const { rmSync } = await import('node:fs');
    rmSync(lost[0]!);
    const out = join(tmp.path, 'out-lost-child');
    // The archive no longer matches its manifest: refused unless the user takes it as it is.
    expect((await roller(['reprocess', copy, '--output', out, '--json'])).code).toBe(1);
    const r = await roller(['reprocess', copy, '--output', out, '--no-verify', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const sampleInfo = JSON.parse(readFileSync(join(out, delegate.path, 'info.json'), 'utf8')) as { usage: Record<string, any>; runtime: { participants: { participant: string; role: string; status: string }[] } };
    const child = sampleInfo.runtime.participants.find((p) => p.role === 'child')!;
    expect(child.status).toBe('missing');
    expect(sampleInfo.usage.partial).toMatchObject({ missing: [child.participant], reason: expect.stringContaining('not in any total') });
    const run = JSON.parse(readFileSync(join(out, 'info.json'), 'utf8')) as RunInfo;
    expect(run.usage.partial).toMatchObject({ samples: [delegate.path] });
    expect(run.samples.find((x) => x.path === delegate.path)!.usage!.partial!.missing).toEqual([child.participant]);
    // The intact archive's totals are whole.
    expect((JSON.parse(readFileSync(join(archive, 'info.json'), 'utf8')) as RunInfo).usage.partial).toBeUndefined();
  });

  it('a sample whose capture kept no raw/ (the default for ok samples) is an error row that says how to keep it', async () => {
    const tasks = join(tmp.path, 'hello.jsonl');
    writeFileSync(tasks, `${JSON.stringify({ id: 'hello', prompt: '[HELLO] say hello' })}\n`);
    const c = await roller(['collect', '--capture-calls', '--tasks', tasks, '--harness', 'claude-code', '--output', join(tmp.path, 'runs'), '--run-name', 'plain']);
    expect(c.code, c.stderr).toBe(0);
    const r = await roller(['reprocess', join(tmp.path, 'runs', 'plain'), '--output', join(tmp.path, 'out-plain'), '--json']);
    expect(r.code).toBe(1);
    expect(json(r).rows[0]!.error!.message).toContain('no raw/native/ archive (collect keeps raw/ for every sample with --capture-debug full');
  }, 5 * 60_000);
});
