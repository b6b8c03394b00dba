/**
 * Call bytes per collected sample (issue 48 §3): how many times the calls' bytes are written and read, file by file,
 * counted from the system calls of `roller collect --capture-calls` and everything it starts (strace -f -y: each
 * read/write with the path of its file). The harness's own files are left out; the proxy's wire log, the projection's
 * calls.jsonl and the published calls.jsonl are what is counted.
 *
 *   npm run bench:io                     # the demo tasks, Claude Code, scripted model (needs strace: apt-get install strace)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const tasks = join(root, 'examples', 'tasks', 'demo.jsonl');
const out = mkdtempSync(join(tmpdir(), 'roller-bench-io-'));
try {
  await run('strace', ['-V']).catch(() => {
    throw new Error('bench:io counts system calls with strace, which is not installed here (apt-get install strace)');
  });
  const trace = join(out, 'strace.txt');
  await run('strace', ['-f', '-y', '-qq', '-e', 'trace=read,pread64,readv,preadv,write,pwrite64,writev,pwritev', '-e', 'signal=none', '-o', trace, join(root, 'bin', 'roller'), 'collect', '--tasks', tasks, '--harness', 'claude-code', '--capture-calls', '--output', join(out, 'runs'), '--run-name', 'io'], { maxBuffer: 64 << 20, timeout: 30 * 60_000 });
  const info = JSON.parse(readFileSync(join(out, 'runs', 'io', 'info.json'), 'utf8')) as { summary: { ok: number }; samples: unknown[] };
  const kinds: [string, RegExp][] = [
    ['wire log (proxy, working)', /\/capture\/raw\/wire\.frames$/],
    ['calls.jsonl (projection, working)', /roller-sample-[^/]+\/capture\/calls\.jsonl$/],
    ['calls.jsonl (published)', /\/samples\/.*\/capture\/attempt-\d+\/calls\.jsonl$/],
  ];
  const bytes = new Map(kinds.map(([k]) => [k, { read: 0, written: 0 }]));
  // pid op(fd</path>, ...) = n; a call another thread interrupted ends on a line of its own: `pid <... op resumed>...) = n`.
  const call = /^(\d+)\s+(\w+)\(\d+<([^>]*)>/;
  const result = /\)\s+=\s+(\d+)$/;
  const open = new Map<string, { op: string; path: string }>();
  const count = (op: string, path: string, n: number) => {
    const kind = kinds.find(([, re]) => re.test(path))?.[0];
    if (kind) bytes.get(kind)![op.includes('read') ? 'read' : 'written'] += n;
  };
  for (const l of readFileSync(trace, 'utf8').split('\n')) {
    const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>/.exec(l);
    if (resumed) {
      const started = open.get(resumed[1]!);
      const n = result.exec(l);
      if (started && n) count(started.op, started.path, Number(n[1]));
      open.delete(resumed[1]!);
      continue;
    }
    const m = call.exec(l);
    if (!m) continue;
    if (l.endsWith('<unfinished ...>')) open.set(m[1]!, { op: m[2]!, path: m[3]! });
    else {
      const n = result.exec(l);
      if (n) count(m[2]!, m[3]!, Number(n[1]));
    }
  }
  const n = info.samples.length;
  console.log(`call bytes per sample: ${n} samples (${info.summary.ok} ok) of examples/tasks/demo.jsonl, Claude Code, --capture-calls`);
  console.log('  file                                  written KB   read KB   read / written');
  for (const [kind, b] of bytes) console.log(`  ${kind.padEnd(36)}  ${(b.written / n / 1024).toFixed(1).padStart(10)}  ${(b.read / n / 1024).toFixed(1).padStart(8)}  ${(b.written ? b.read / b.written : 0).toFixed(2).padStart(15)}`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
