import { linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collect } from '../../src/index.js';
import type { RunInfo, SampleInfo } from '../../src/schemas/run-info.js';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The README's demo run (three real Claude Code samples on the scripted model, calls captured), collected into `work`. */
export async function demoRun(work: string): Promise<{ dir: string; info: RunInfo }> {
  await collect({ tasks: join(repoRoot, 'examples/tasks/demo.jsonl'), harness: 'claude-code', models: ['scripted/default'], captureCalls: true, output: join(work, 'runs'), runName: 'demo' });
  const dir = join(work, 'runs', 'demo');
  return { dir, info: JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) as RunInfo };
}

/** Every file of `from` hard-linked into `to` (directories made), but the sample's own info.json. */
export function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isDirectory()) linkTree(join(from, e.name), join(to, e.name));
    else if (e.name !== 'info.json' || from.includes('capture')) linkSync(join(from, e.name), join(to, e.name));
  }
}

/** A run of `n` samples made of the demo's, round-robin: big files hard-linked, each sample's info.json its own. */
export function replicateRun(demo: { dir: string; info: RunInfo }, out: string, n: number, runName = 'big'): void {
  const rows: RunInfo['samples'] = [];
  for (let i = 0; i < n; i++) {
    const src = demo.info.samples[i % demo.info.samples.length]!;
    const path = `samples/scripted_default/${String(i).padStart(5, '0')}_${src.task_id}`;
    linkTree(join(demo.dir, src.path), join(out, path));
    const sampleInfo = JSON.parse(readFileSync(join(demo.dir, src.path, 'info.json'), 'utf8')) as SampleInfo;
    writeFileSync(join(out, path, 'info.json'), JSON.stringify({ ...sampleInfo, index: i, elapsed_ms: sampleInfo.elapsed_ms + (i % 97) }));
    rows.push({ ...src, index: i, path, usage: src.usage ? { ...src.usage, input: src.usage.input + (i % 1013) } : null });
  }
  writeFileSync(join(out, 'info.json'), JSON.stringify({ ...demo.info, run_name: runName, progress: { total: n, processed: n, pending: 0 }, samples: rows }));
}
