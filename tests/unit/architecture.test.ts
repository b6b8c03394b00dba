/**
 * Layers point down (DESIGN.md §4): core <- schemas <- transforms <- sources / sinks / harnesses <- pipelines <- cli.
 * Read from the import graph of src/, so a new import that points up fails here, naming file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
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

/** The public entry points: for users, never imported by a layer (a layer importing them would import every layer). */
const ENTRY_POINTS = [join(src, 'index.ts'), join(src, 'testing')];
const isEntryPoint = (target: string) => ENTRY_POINTS.some((e) => target === e || target === e.replace(/\.ts$/, '.js') || target.startsWith(`${e}/`));

/**
 * Every relative import of a source file, with its line: static, dynamic, side-effect and re-exports, in either
 * quote, as TypeScript's own pre-processor reads them.
 */
function importsOf(file: string, text = readFileSync(file, 'utf8')): { target: string; line: number }[] {
  const lineOf = (pos: number) => text.slice(0, pos).split('\n').length;
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.filter((f) => f.fileName.startsWith('.'))
    .map((f) => ({ target: resolve(dirname(file), f.fileName), line: lineOf(f.pos) }));
}

/** What breaks the rule in these files: a layer importing one above it, or a public entry point. */
function violationsOf(sources: { file: string; text?: string }[]): string[] {
  const violations: string[] = [];
  for (const { file, text } of sources) {
    const from = layerOf(file);
    if (!from) continue;
    for (const { target, line } of importsOf(file, text)) {
      const to = layerOf(target);
      if (isEntryPoint(target)) violations.push(`${relative(repoRoot, file)}:${line}: ${from} imports the public entry point ${relative(repoRoot, target)}`);
      else if (to && to !== from && !ALLOWED[from].includes(to)) violations.push(`${relative(repoRoot, file)}:${line}: ${from} imports ${to} (${relative(repoRoot, target)})`);
    }
  }
  return violations;
}

describe('architecture: layers point down', () => {
  it('no module imports a layer above its own, or a public entry point', () => {
    expect(violationsOf(files(src).map((file) => ({ file })))).toEqual([]);
  });

  it('the check sees imports (it is not vacuous)', () => {
    const all = files(src).flatMap((f) => importsOf(f).map((i) => [layerOf(f), layerOf(i.target)]));
    expect(all.filter(([a, b]) => a === 'pipelines' && b === 'transforms').length).toBeGreaterThan(0);
    expect(all.filter(([a, b]) => a === 'transforms' && b === 'schemas').length).toBeGreaterThan(0);
  });

  it.each([
    ['an upward import', `import { convertNative } from '../pipelines/convert.js';`],
    ['in double quotes', `import { convertNative } from "../pipelines/convert.js";`],
    ['for its side effects', `import '../pipelines/convert.js';`],
    ['re-exported', `export * from '../pipelines/convert.js';`],
    ['dynamic', `const m = await import("../pipelines/convert.js");`],
    ['the root index', `import { defineSink } from '../index.js';`],
    ['testing/', `import { checkSink } from '../testing/index.js';`],
  ])('fails on a core module with %s', (_what, line) => {
    const file = join(src, 'core', 'errors.ts');
    const text = `${readFileSync(file, 'utf8')}\n${line}\n`;
    expect(violationsOf([{ file, text }])).toEqual([expect.stringMatching(/^src\/core\/errors\.ts:\d+: core imports (pipelines|the public entry point)/)]);
  });
});

describe('error codes: one catalog', () => {
  it('every ROLLER_ code written in src/ is in ErrorCode (core/errors.ts); a quoted ROLLER_ name elsewhere is an environment variable', () => {
    const catalog = readFileSync(join(src, 'core', 'errors.ts'), 'utf8');
    const ENVIRONMENT_NAMES = new Set(['ROLLER_PROVIDER_KEY', 'ROLLER_SHARD', 'ROLLER_SHARD_COUNT', 'ROLLER_REDIS_PASSWORD']);
    const stray: string[] = [];
    for (const file of files(src)) {
      if (file.endsWith(join('core', 'errors.ts'))) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          for (const m of text.matchAll(/['"`](ROLLER_[A-Z0-9_]+)['"`]/g)) if (!ENVIRONMENT_NAMES.has(m[1]!)) stray.push(`${relative(repoRoot, file)}:${i + 1}: ${m[1]}${catalog.includes(`'${m[1]}'`) ? ' (use ErrorCode)' : ' (not in ErrorCode)'}`);
        });
    }
    expect(stray).toEqual([]);
  });
});

/** Functions of `file` longer than `limit` lines, as "path:line name (n lines)". */
function longFunctions(file: string, text: string, limit: number): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.body) {
      const from = sf.getLineAndCharacterOfPosition(n.getStart()).line;
      const lines = sf.getLineAndCharacterOfPosition(n.end).line - from + 1;
      if (lines > limit) long.push(`${relative(repoRoot, file)}:${from + 1} ${(n as ts.FunctionDeclaration).name?.getText() ?? '(anonymous)'} (${lines} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return long;
}

describe('the pipelines floor stays readable', () => {
  it('no function in src/pipelines is over 80 lines', () => {
    expect(files(join(src, 'pipelines')).flatMap((f) => longFunctions(f, readFileSync(f, 'utf8'), 80))).toEqual([]);
  });

  it('the length check sees functions (it is not vacuous)', () => {
    const body = Array.from({ length: 81 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(longFunctions('src/pipelines/x.ts', `export function big() {\n${body}\n}\nconst small = () => 1;\n`, 80)).toEqual(['src/pipelines/x.ts:1 big (83 lines)']);
  });
});
