/**
 * roller's per-participant usage over a large CLAUDE_CONFIG_DIR vs the peer ccusage 20.0.24
 * (`daily --json --offline`, its native binary) on the same tree, in one run. Both run as child processes
 * measured the same way (wall time, CPU time, peak RSS from getrusage of the children).
 *
 *   npm run bench:claude-native                 # ~500 MB tree
 *   npm run bench:claude-native -- --mb 100
 *   npm run bench:claude-native -- --workers 1  # roller's scan in one thread
 *   CCUSAGE_BIN=/path/to/ccusage npm run bench:claude-native
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateTree } from './generate.js';

const run = promisify(execFile);
const dataDir = fileURLToPath(new URL('../../../bench/data/', import.meta.url));
const rollerBin = fileURLToPath(new URL('../../../bin/roller', import.meta.url));

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** Runs a command under python's getrusage(RUSAGE_CHILDREN): wall s, cpu s, peak RSS MB, stdout. */
async function measured(cmd: string[], env: Record<string, string>): Promise<{ wall: number; cpu: number; rssMb: number; stdout: string }> {
  const py = [
    'import json,resource,subprocess,sys,time',
    't=time.time(); p=subprocess.run(sys.argv[1:], capture_output=True, text=True); w=time.time()-t',
    'r=resource.getrusage(resource.RUSAGE_CHILDREN)',
    'sys.stderr.write(p.stderr[-2000:])',
    'print(json.dumps({"wall":w,"cpu":r.ru_utime+r.ru_stime,"rss":r.ru_maxrss/1024,"code":p.returncode,"out":p.stdout}))',
  ].join('\n');
  const { stdout } = await run('python3', ['-c', py, ...cmd], { env: { ...process.env, ...env }, maxBuffer: 256 << 20 });
  const r = JSON.parse(stdout) as { wall: number; cpu: number; rss: number; code: number; out: string };
  if (r.code !== 0) throw new Error(`${cmd.join(' ')} exited ${r.code}`);
  return { wall: r.wall, cpu: r.cpu, rssMb: r.rss, stdout: r.out };
}

async function main(): Promise<void> {
  const mb = Number(arg('--mb', '500'));
  const tree = join(dataDir, `claude-config-${mb}mb`);
  if (!existsSync(join(tree, 'projects'))) {
    process.stdout.write(`generating ${tree} (${mb} MB)... `);
    const g = await generateTree(tree, mb * 1e6);
    process.stdout.write(`${g.sessions} sessions, ${(g.bytes / 1e6).toFixed(0)} MB\n`);
  }
  const ccusage = process.env.CCUSAGE_BIN ?? '/tmp/ccusage/node_modules/.bin/ccusage';
  if (!existsSync(ccusage)) throw new Error(`ccusage not found at ${ccusage}: npm install --prefix /tmp/ccusage ccusage@20.0.24 (or set CCUSAGE_BIN)`);
  const bytes = await sizeOf(tree);

  // Warm the page cache once so neither tool pays for the first read; then each tool runs `--runs` times,
  // interleaved, and its fastest run counts (the VM is shared: single runs move by 20%).
  // What a user runs: the CLI, start-up included. `--workers N` passes through (default: the CLI's own).
  const workers = arg('--workers', '');
  const rollerCmd = [process.execPath, rollerBin, 'usage', '--harness', 'claude-code', tree, '--json', ...(workers ? ['--workers', workers] : [])];
  await measured(rollerCmd, {});
  const runs = Number(arg('--runs', '3'));
  const ours: Awaited<ReturnType<typeof measured>>[] = [];
  const theirs: Awaited<ReturnType<typeof measured>>[] = [];
  for (let i = 0; i < runs; i++) {
    ours.push(await measured(rollerCmd, {}));
    theirs.push(await measured([ccusage, 'daily', '--json', '--offline'], { CLAUDE_CONFIG_DIR: tree, TZ: 'UTC' }));
  }
  const best = (xs: typeof ours) => xs.reduce((a, b) => (b.wall < a.wall ? b : a));
  const roller = best(ours);
  const peer = best(theirs);
  console.log(`runs (wall s): roller ${ours.map((x) => x.wall.toFixed(2)).join(' ')}; ccusage ${theirs.map((x) => x.wall.toFixed(2)).join(' ')}; best of ${runs} below`);
  const report = JSON.parse(roller.stdout) as { totals: Record<string, number>; participants: unknown[] };
  const r: Record<string, number> = { ...report.totals, participants: report.participants.length };
  const c = JSON.parse(peer.stdout) as { totals?: Record<string, number> };
  const ct = c.totals ?? {};
  const mbps = (s: number) => (bytes / 1e6 / s).toFixed(0);
  console.log(`tree: ${(bytes / 1e6).toFixed(0)} MB, ${r.participants} participants, ${r.messages} messages`);
  console.log(`roller  : ${roller.wall.toFixed(2)} s = ${mbps(roller.wall)} MB/s, ${(roller.cpu / roller.wall).toFixed(2)} cores, peak RSS ${roller.rssMb.toFixed(0)} MB`);
  console.log(`ccusage : ${peer.wall.toFixed(2)} s = ${mbps(peer.wall)} MB/s, ${(peer.cpu / peer.wall).toFixed(2)} cores, peak RSS ${peer.rssMb.toFixed(0)} MB`);
  console.log(`speed roller/ccusage ${(peer.wall / roller.wall).toFixed(2)} (limit >= 1.0); peak RSS roller/ccusage ${(roller.rssMb / peer.rssMb).toFixed(2)} (limit <= 0.5)`);
  const rows: [string, number, number | undefined][] = [
    ['input', r.input!, ct.inputTokens],
    ['output', r.output!, ct.outputTokens],
    ['cache creation', r.cache_creation!, ct.cacheCreationTokens],
    ['cache read', r.cache_read!, ct.cacheReadTokens],
  ];
  for (const [name, ours, theirs] of rows) console.log(`  ${name.padEnd(15)} roller ${String(ours).padStart(12)}  ccusage ${String(theirs ?? '-').padStart(12)}  ${ours === theirs ? 'agree' : 'DIFFER'}`);
}

async function sizeOf(root: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  let total = 0;
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  return total;
}

await main();
