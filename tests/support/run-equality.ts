import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MERGE_VOLATILE } from '../../src/pipelines/scale/merge.js';
import { masked } from './comparable-run.js';

type Json = Record<string, unknown>;

/** Every file under `dir`, relative, sorted (links and directories aside). */
export function runFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/**
 * Where two runs of the same requests differ, field by field: the same files, each JSON/JSONL value equal but for
 * MERGE_VOLATILE's fields (times, the merge's provenance); with `harnessRandom`, the ids and times a harness draws
 * anew on every run are masked in strings too (comparable-run's masked: two runs of a real CLI never share them).
 */
export function runDifferences(a: string, b: string, o: { skip?: readonly string[]; harnessRandom?: boolean } = {}): string[] {
  const out: string[] = [];
  const skip = new Set(o.skip ?? []);
  const fa = runFiles(a).filter((f) => !skip.has(f));
  const fb = runFiles(b).filter((f) => !skip.has(f));
  for (const f of fa.filter((x) => !fb.includes(x))) out.push(`${f}: only in ${a}`);
  for (const f of fb.filter((x) => !fa.includes(x))) out.push(`${f}: only in ${b}`);
  const text = (s: string) => (o.harnessRandom ? masked(s) : s);
  const walk = (x: unknown, y: unknown, path: string): void => {
    if (typeof x === 'string' && typeof y === 'string') {
      if (text(x) !== text(y)) out.push(`${path}: ${JSON.stringify(x).slice(0, 160)} vs ${JSON.stringify(y).slice(0, 160)}`);
      return;
    }
    if (x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) walk((x as Json)[k], (y as Json)[k], `${path}.${k}`);
      return;
    }
    if (x !== y) out.push(`${path}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
  };
  for (const f of fa.filter((x) => fb.includes(x))) {
    const ta = readFileSync(join(a, f), 'utf8');
    const tb = readFileSync(join(b, f), 'utf8');
    if (!o.harnessRandom && ta === tb) continue;
    const volatile = MERGE_VOLATILE[f] ?? [];
    const strip = (v: unknown) => (volatile.length && v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => !volatile.includes(k))) : v);
    if (f.endsWith('.jsonl')) {
      const la = ta.split('\n').filter(Boolean);
      const lb = tb.split('\n').filter(Boolean);
      if (la.length !== lb.length) out.push(`${f}: ${la.length} lines vs ${lb.length}`);
      la.forEach((l, i) => lb[i] !== undefined && walk(JSON.parse(l), JSON.parse(lb[i]!), `${f}:${i + 1}`));
    } else if (f.endsWith('.json')) walk(strip(JSON.parse(ta)), strip(JSON.parse(tb)), f);
    else if (text(ta) !== text(tb)) out.push(`${f}: the bytes differ`);
  }
  return out;
}
