/**
 * Layers point down (DESIGN.md §4): core <- schemas <- transforms <- sources / sinks / harnesses <- pipelines <- cli.
 * Read from the import graph of src/, so a new import that points up fails here, naming file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

const src = join(repoRoot, 'src');
const LAYERS = ['core', 'schemas', 'transforms', 'sources', 'sinks', 'harnesses', 'pipelines', 'cli'] as const;
type Layer = (typeof LAYERS)[number];

/** What each layer may import besides itself. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  core: [],
  schemas: ['core'],
  transforms: ['core', 'schemas'],
  sources: ['core', 'schemas', 'transforms'],
  sinks: ['core', 'schemas', 'transforms'],
  // A harness adapter hands the runners (sources) its launch plan.
  harnesses: ['core', 'schemas', 'transforms', 'sources'],
  pipelines: ['core', 'schemas', 'transforms', 'sources', 'sinks', 'harnesses'],
  cli: ['core', 'schemas', 'transforms', 'sources', 'sinks', 'harnesses', 'pipelines'],
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const layerOf = (path: string): Layer | undefined => LAYERS.find((l) => relative(src, path).split('/')[0] === l);

/** Every relative import (static or dynamic) of a source file, with its line. */
function importsOf(file: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)) out.push({ target: resolve(dirname(file), m[1]!), line: i + 1 });
    });
  return out;
}

describe('architecture: layers point down', () => {
  it('no module imports a layer above its own', () => {
    const violations: string[] = [];
    for (const file of files(src)) {
      const from = layerOf(file);
      if (!from) continue;
      for (const { target, line } of importsOf(file)) {
        const to = layerOf(target);
        if (to && to !== from && !ALLOWED[from].includes(to)) violations.push(`${relative(repoRoot, file)}:${line}: ${from} imports ${to} (${relative(repoRoot, target)})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the check sees imports (it is not vacuous)', () => {
    const all = files(src).flatMap((f) => importsOf(f).map((i) => [layerOf(f), layerOf(i.target)]));
    expect(all.filter(([a, b]) => a === 'pipelines' && b === 'transforms').length).toBeGreaterThan(0);
    expect(all.filter(([a, b]) => a === 'transforms' && b === 'schemas').length).toBeGreaterThan(0);
  });
});
