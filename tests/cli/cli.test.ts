import { execFile, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { recordTypes } from '../../src/schemas/index.js';
import { atifFixture, repoRoot, rollerBin } from '../support/paths.js';

const run = promisify(execFile);

import { useTempDir } from '../support/temp-dir.js';
import { roller } from '../support/roller-cli.js';

const tmp = useTempDir('cli');

describe('roller CLI (bin/roller over dist/)', () => {
  it('schema --out writes one JSON Schema per record type', async () => {
    const out = join(tmp.path, 'schemas');
    const res = await roller('schema', '--out', out);
    expect(res.code).toBe(0);
    const files = (await readdir(out)).sort();
    expect(files).toEqual(Object.keys(recordTypes).map((n) => `${n}.schema.json`).sort());
    for (const f of files) {
      const doc = JSON.parse(await readFile(join(out, f), 'utf8')) as Record<string, unknown>;
      expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(doc.title).toBe(f.replace('.schema.json', ''));
    }
  });

  it('validate passes the ATIF RFC example', async () => {
    const res = await roller('validate', '--schema', 'atif', atifFixture);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`ok ${atifFixture} (1 record)`);
  });

  it('validate reports a broken ATIF copy with file, line and JSON path', async () => {
    const doc = JSON.parse(await readFile(atifFixture, 'utf8')) as { steps: { step_id: number; source: string; observation?: unknown }[] };
    // A tool result in the final agent step that points at a call of step 2.
    const last = doc.steps.at(-1)!;
    last.observation = { results: [{ source_call_id: 'call_price_1', content: 'moved' }] };
    const broken = join(tmp.path, 'broken.trajectory.json');
    const text = JSON.stringify(doc, null, 2);
    await writeFile(broken, text);
    const res = await roller('validate', '--schema', 'atif', broken);
    expect(res.code).toBe(1);
    const i = doc.steps.length - 1;
    expect(res.stdout).toMatch(
      new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: \\$\\.steps\\[${i}\\]\\.observation\\.results\\[0\\]\\.source_call_id: Observation result references source_call_id 'call_price_1'`, 'm'),
    );
    // The line named is the offending value in the file (the moved result, not the original call).
    const reported = Number(/broken\.trajectory\.json:(\d+):/.exec(res.stdout)![1]);
    const lines = text.split('\n');
    expect(lines[reported - 1]).toContain('"source_call_id": "call_price_1"');
    expect(lines[reported]).toContain('"content": "moved"');
    expect(res.stdout).toContain(`FAIL ${broken} (1 error)`);
  });

  it('validate checks JSONL line by line, naming the line of each bad record and keeping on', async () => {
    const tasks = join(tmp.path, 'tasks.jsonl');
    await writeFile(tasks, ['{"id":"a","prompt":"p"}', '{"id":"b","promt":"typo"}', '{not json', '{"id":"d","prompt":"p"}', ''].join('\n'));
    const res = await roller('validate', '--schema', 'task', tasks);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`${tasks}:2: $.prompt:`);
    expect(res.stdout).toContain(`${tasks}:2: $.promt: unexpected field`);
    expect(res.stdout).toContain(`${tasks}:3: not valid JSON`);
    expect(res.stdout).toContain(`FAIL ${tasks} (3 errors)`);
    expect(res.stderr).toContain('1 files, 3 records, 3 errors'); // the unparseable line is not a record
  });

  it('an unknown schema name is a usage error that lists the known ones', async () => {
    const res = await roller('validate', '--schema', 'atfi', atifFixture);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('unknown record type; one of: call, relation');
  });

  it('`roller validate ... | head -1` exits 0 on the broken pipe, without a stack trace', () => {
    const many = Array.from({ length: 3000 }, () => atifFixture);
    const list = join(tmp.path, 'args.txt');
    writeFileSync(list, many.join('\n'));
    const res = spawnSync('bash', ['-c', `"${rollerBin}" validate --schema atif $(cat "${list}") | head -1; echo "status=\${PIPESTATUS[0]}" >&2`], {
      encoding: 'utf8',
    });
    expect(res.stdout.trim().split('\n')).toEqual([`ok ${atifFixture} (1 record)`]);
    expect(res.stderr).toContain('status=0');
    expect(res.stderr).not.toMatch(/EPIPE|Error|at /);
  });
  it('usage --harness claude-code reads a whole CLAUDE_CONFIG_DIR: per participant and in total, the usage the model sent', async () => {
    // A config dir holding both lab runs (main transcripts and sub-agent files), and a history.jsonl beside
    // projects/ that is not a transcript (it must not be read even though it holds the marker).
    const config = join(tmp.path, 'claude-config');
    for (const run of ['lab-single', 'lab-nofwd']) await cp(join(repoRoot, 'tests/fixtures/claude-code', run, 'projects'), join(config, 'projects'), { recursive: true });
    await writeFile(join(config, 'history.jsonl'), '{"type":"assistant","message":{"id":"msg_x","usage":{"input_tokens":999}}}\n');
    // What the scripted server sent, per session and agent (request headers), from its request logs.
    const sent = new Map<string, { input: number; cache_creation: number; cache_read: number; output: number }>();
    for (const run of ['lab-single', 'lab-nofwd']) {
      for (const line of (await readFile(join(repoRoot, 'tests/fixtures/claude-code', run, 'requests.jsonl'), 'utf8')).trim().split('\n')) {
        const r = JSON.parse(line) as { headers: Record<string, string>; response: { message: { usage: Record<string, number> } } };
        const agent = r.headers['x-claude-code-agent-id'];
        const key = agent ? `agent:${agent}` : `session:${r.headers['x-claude-code-session-id']}`;
        const u = r.response.message.usage;
        const t = sent.get(key) ?? { input: 0, cache_creation: 0, cache_read: 0, output: 0 };
        sent.set(key, { input: t.input + u.input_tokens!, cache_creation: t.cache_creation + u.cache_creation_input_tokens!, cache_read: t.cache_read + u.cache_read_input_tokens!, output: t.output + u.output_tokens! });
      }
    }
    for (const workers of ['1', '2']) {
      const res = await roller('usage', '--harness', 'claude-code', config, '--json', '--workers', workers);
      expect(res.code, res.stderr).toBe(0);
      const report = JSON.parse(res.stdout) as { files: number; totals: Record<string, number>; participants: { participant: string; parent: string | null; tokens: Record<string, number> }[] };
      expect(report.files).toBe(4);
      expect(report.participants.map((p) => p.participant).sort()).toEqual([...sent.keys()].sort());
      for (const p of report.participants) {
        const { reasoning, ...tokens } = p.tokens;
        expect(reasoning).toBe(0);
        expect(tokens, p.participant).toEqual(sent.get(p.participant));
        if (p.participant.startsWith('agent:')) expect(report.participants.map((q) => q.participant)).toContain(p.parent);
        else expect(p.parent).toBeNull();
      }
      const sum = (k: 'input' | 'output') => [...sent.values()].reduce((a, t) => a + t[k], 0);
      expect(report.totals.input).toBe(sum('input'));
      expect(report.totals.output).toBe(sum('output'));
    }
    const text = await roller('usage', '--harness', 'claude-code', config);
    expect(text.stdout).toMatch(/^total \(4 participants, 4 files\)/m);
    expect(text.stdout).toMatch(/^ {2}agent:/m); // sub-agents listed under their session
  });

  it('usage --harness claude-code follows links; what it cannot read is named and left out of the totals, the rest is counted', async () => {
    const config = join(tmp.path, 'claude-config-links');
    const project = join(config, 'projects', '-workspace-demo');
    await mkdir(project, { recursive: true });
    // A project whose session lives elsewhere, linked in (sub-agent directory linked too).
    const elsewhere = join(repoRoot, 'tests/fixtures/claude-code/lab-single/projects/-workspace-demo');
    for (const name of await readdir(elsewhere)) await symlink(join(elsewhere, name), join(project, name));
    await symlink(join(project, 'gone-away.jsonl.target'), join(project, 'gone.jsonl')); // dangling: routine (a deleted file)
    const clean = await roller('usage', '--harness', 'claude-code', config, '--json');
    expect(clean.code, clean.stderr).toBe(0);
    const r1 = JSON.parse(clean.stdout) as { files: number; unreadable: { path: string; code: string }[]; totals: { input: number; output: number } };
    expect(r1.files).toBe(2); // the linked session and its linked sub-agent file
    expect(r1.totals).toMatchObject({ input: 28, output: 359 });
    expect(r1.unreadable).toEqual([expect.objectContaining({ path: join(project, 'gone.jsonl'), code: 'ENOENT' })]);

    await symlink('loop.jsonl', join(project, 'loop.jsonl')); // a link to itself: ELOOP, not routine
    const res = await roller('usage', '--harness', 'claude-code', config, '--json');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not be read and are not in the totals, e.g. ${join(project, 'loop.jsonl')} (ELOOP)`);
    const r2 = JSON.parse(res.stdout) as typeof r1;
    expect(r2.unreadable.map((u) => u.code).sort()).toEqual(['ELOOP', 'ENOENT']);
    expect(r2.totals).toMatchObject({ input: 28, output: 359 });
    const text = await roller('usage', '--harness', 'claude-code', config);
    expect(text.stdout).toContain(`not read: ${join(project, 'gone.jsonl')}: gone before it was read`);
  });

  it('usage --harness says what it cannot do, and a missing directory is named', async () => {
    const other = await roller('usage', '--harness', 'codex', tmp.path);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('only claude-code has a native usage scan; for the others, roller convert --harness codex --native DIR --out OUT writes a usage.json per converted session under OUT');
    const missing = await roller('usage', '--harness', 'claude-code', join(tmp.path, 'nope'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(tmp.path, 'nope')}: not a directory`);
  });
  it("collect takes the harnesses' profile options from their adapters, and refuses one of another harness or an unknown value", async () => {
    const help = await roller('collect', '--help');
    expect(help.stdout).toMatch(/--pi-subagent-extension\s+pi: enable the example sub-agent extension/);
    expect(help.stdout).toMatch(/--openclaw-mode <value>\s+openclaw: gateway \(/);
    const tasks = join(tmp.path, 'profile-tasks.jsonl');
    writeFileSync(tasks, '{"id":"t1","prompt":"[HELLO] hi"}\n');
    const other = await roller('collect', '--tasks', tasks, '--harness', 'codex', '--pi-subagent-extension', '--output', join(tmp.path, 'profile-runs'));
    expect(other.code).toBe(2);
    expect(other.stderr).toBe("roller: --pi-subagent-extension is an option of pi (this run's harness is codex) [ROLLER_INVALID_OPTIONS]\n");
    const bad = await roller('collect', '--tasks', tasks, '--harness', 'openclaw', '--openclaw-mode', 'bogus', '--output', join(tmp.path, 'profile-runs'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('roller: --openclaw-mode bogus: openclaw takes gateway or exec [ROLLER_INVALID_OPTIONS]\n');
    const runner = await roller('collect', '--tasks', tasks, '--runner', 'ssh', '--output', join(tmp.path, 'profile-runs'));
    expect(runner.stderr).toBe('roller: --runner ssh: local or docker [ROLLER_INVALID_OPTIONS]\n');
    expect(existsSync(join(tmp.path, 'profile-runs'))).toBe(false);
  });

  it('a calls sink in a run that captures no calls is refused before anything runs, naming --capture-calls', async () => {
    const module = join(tmp.path, 'count-calls.mjs');
    writeFileSync(module, "export default { name: 'count-calls', create: () => ({ calls: { name: 'count-calls', async consume(input) { let n = 0; for await (const _ of input) n++; return { name: 'count-calls', received: n, written: n }; } } }) };\n");
    const tasks = join(tmp.path, 'calls-sink-tasks.jsonl');
    writeFileSync(tasks, '{"id":"t1","prompt":"[HELLO] hi"}\n');
    const r = await roller('collect', '--tasks', tasks, '--sink', module, '--output', join(tmp.path, 'calls-sink-runs'));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('roller: --sink count-calls: it takes calls, and this run captures none, so it would get nothing; pass --capture-calls (the library: captureCalls: true) [ROLLER_INVALID_OPTIONS]\n');
    expect(existsSync(join(tmp.path, 'calls-sink-runs'))).toBe(false);
  });

  it('convert without --wire says what the session files lack (system prompt, tools offered) and how to get it', async () => {
    const claude = await roller('convert', '--harness', 'claude-code', '--native', join(repoRoot, 'tests/fixtures/claude-code/lab-single'), '--out', join(tmp.path, 'cv-claude'));
    expect(claude.code, claude.stderr).toBe(0);
    expect(claude.stderr).toContain(`roller convert: note: ${join(tmp.path, 'cv-claude')}: no system prompt and only the 1 tool(s) the session used, not every tool it was offered (the session files hold no more); pass --wire`);
    const codex = await roller('convert', '--harness', 'codex', '--native', join(repoRoot, 'tests/fixtures/codex/lab'), '--out', join(tmp.path, 'cv-codex'));
    expect(codex.stdout).toContain('SFT unavailable (the trajectory calls tools but no tools schema was captured)');
    expect(codex.stderr).toMatch(/roller convert: note: .*: no tool definitions \(the session files hold no more\); pass --wire/);
  });

  it('a one-line script (`node --input-type=module -e`) can use the library, worker threads included', async () => {
    // Workers inherit the process's Node options; --input-type is only valid for the main entry.
    const script = `const m = await import(${JSON.stringify(join(repoRoot, 'dist/src/index.js'))}); const r = await m.nativeUsage(${JSON.stringify(join(repoRoot, 'tests/fixtures/claude-code/lab-single'))}, { workers: 2 }); console.log(JSON.stringify(r.totals));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toMatchObject({ input: 28, output: 359, messages: 4 });
  });
  it('node started with V8 options (`--max-old-space-size`) still runs roller\'s worker threads', async () => {
    // Node refuses V8 options in a worker's execArgv; roller gives its workers one (without --input-type).
    const { stdout } = await run(process.execPath, ['--max-old-space-size=2048', '--stack-size=900', join(repoRoot, 'bin/roller'), 'usage', '--harness', 'claude-code', join(repoRoot, 'tests/fixtures/claude-code/lab-single'), '--workers', '2', '--json']);
    expect(JSON.parse(stdout).totals).toMatchObject({ input: 28, output: 359, messages: 4 });
  });
  it('node started with a per-process option outside roller\'s list (`--v8-pool-size`) still runs its worker threads', async () => {
    const { stdout } = await run(process.execPath, ['--v8-pool-size=2', join(repoRoot, 'bin/roller'), 'usage', '--harness', 'claude-code', join(repoRoot, 'tests/fixtures/claude-code/lab-single'), '--workers', '2', '--json']);
    expect(JSON.parse(stdout).totals).toMatchObject({ input: 28, output: 359, messages: 4 });
  });
});
