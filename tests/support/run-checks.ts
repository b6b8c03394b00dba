/**
 * Checks every collect e2e makes of a finished run: reprocess reproduces it byte for byte, and its ATIF export
 * validates with every child embedded. Bound to a test file's temp dir.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DUMMY_KEY, filesUnder, info, readJson, roller, sample } from './collect-run.js';

type Json = Record<string, any>;

export function runChecks(tmp: { readonly path: string }) {
  /**
   * `roller reprocess` of a run whose captures kept raw/ reproduces every file of it byte for byte (its own
   * record, reprocess.jsonl, aside); a second reprocess into the same tree writes nothing.
   */
  async function expectReprocessReproduces(run: string): Promise<void> {
    // The archive (native files and wire log kept under raw/) holds no credential either.
    for (const f of filesUnder(run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);
    const out = join(tmp.path, 'reprocessed', run.split('/').slice(-2).join('-'));
    const r = await roller(['reprocess', run, '--output', out, '--concurrency', '2']);
    expect(r.code, r.stderr).toBe(0);
    const files = (dir: string) => filesUnder(dir).map((f) => f.slice(dir.length + 1)).filter((f) => f !== 'reprocess.jsonl').sort();
    expect(files(out)).toEqual(files(run));
    for (const f of files(run)) expect(readFileSync(join(out, f)).equals(readFileSync(join(run, f))), f).toBe(true);
    const again = await roller(['reprocess', run, '--output', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('nothing new was written');
    // The calls decoded again from the archived wire log by the proxy's decoders: the same bytes too.
    const wired = `${out}-from-wire`;
    const w = await roller(['reprocess', run, '--output', wired, '--from-wire']);
    expect(w.code, w.stderr).toBe(0);
    expect(files(wired)).toEqual(files(run));
    for (const f of files(run)) expect(readFileSync(join(wired, f)).equals(readFileSync(join(run, f))), `--from-wire ${f}`).toBe(true);
  }


  /**
   * `roller export` of a run: a valid ATIF trajectory per sample with an ACTF (Harbor's validator rules), and
   * every child participant embedded as a sub-agent trajectory the parent's spawning call result points at.
   * Returns the trajectories.
   */
  async function expectAtifExport(run: string): Promise<Json[]> {
    const out = join(tmp.path, 'atif', run.split('/').slice(-2).join('-'));
    const r = await roller(['export', run, '--output', out]);
    expect(r.code, r.stderr).toBe(0);
    const files = filesUnder(out).filter((f) => f.endsWith('trajectory.json'));
    const rows = info(run).samples.filter((row) => existsSync(join(run, row.path, 'trace_ACTF.json')));
    expect(files).toHaveLength(rows.length);
    const v = await roller(['validate', '--schema', 'atif', ...files]);
    expect(v.code, v.stdout).toBe(0);
    const trajectories = files.map((f) => readJson<Json>(f));
    for (const row of rows) {
      const children = ((sample(run, row).runtime.participants ?? []) as Json[]).filter((p) => p.role === 'child');
      const t = trajectories.find((x) => String(x.session_id).endsWith(row.path.split('/').slice(-2).join('/')))!;
      // A nested sub-agent is embedded in its parent's embedded trajectory (each one valid on its own).
      const tree = (x: Json): Json[] => [x, ...((x.subagent_trajectories ?? []) as Json[]).flatMap(tree)];
      const all = tree(t);
      const embedded = all.slice(1).map((x) => x.trajectory_id);
      for (const c of children) {
        expect(embedded, `${row.path}: child ${c.native_id}`).toContain(c.native_id);
        const parent = all.find((x) => x.extra?.roller?.participant === c.parent) ?? t;
        expect(((parent.subagent_trajectories ?? []) as Json[]).map((x) => x.trajectory_id), `${row.path}: ${c.native_id} under its parent`).toContain(c.native_id);
        const refs = all.flatMap((x) => (x.steps as Json[]).flatMap((st) => ((st.observation?.results ?? []) as Json[]).flatMap((res) => (res.subagent_trajectory_ref ?? []) as Json[])));
        if (c.spawn_tool_call_id) expect(refs.map((x) => x.trajectory_id)).toContain(c.native_id);
      }
    }
    return trajectories;
  }
  return { expectReprocessReproduces, expectAtifExport };
}
