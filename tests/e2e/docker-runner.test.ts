/**
 * `roller collect --runner docker` on a real Docker engine (Debian's docker.io, a private dockerd this file starts:
 * scripts/docker-engine.sh), every harness that installs here, each sample in its own container, on an API model (the
 * scripted model served as a provider, with a key only roller's proxy holds). The docker runner's outputs must agree
 * with the local runner's on the embedded model; faults end as recorded statuses, and no container is left behind
 * (checked when the engine stops).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRuns, DUMMY_KEY, filesUnder, info, readJsonl, roller, sample } from '../support/collect-run.js';
import { comparableRun, lockedContainer } from '../support/comparable-run.js';
import { startTestEngine } from '../support/docker-engine.js';
import { filesHolding } from '../support/files-holding.js';
import { startUpstream } from '../support/http.js';
import { useScriptedProvider } from '../support/scripted-provider.js';
import { useTempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;
const tmp = useTempDir('docker-runner');
const { tasksFile } = collectRuns(tmp);
const provider = useScriptedProvider(tmp);
const engine = startTestEngine();
if ('reason' in engine) console.log(`docker e2e skipped: ${engine.reason}`);
const live = !('reason' in engine);
if (live) process.env.DOCKER_HOST = engine.host;
const image = live ? engine.image : '';

const demo = join(import.meta.dirname, '..', '..', 'examples', 'tasks', 'demo.jsonl');
const dockerCli = (args: string[]) => (live ? engine.docker(args) : { code: -1, stdout: '', stderr: 'no engine' });
const containersOf = (label = 'dev.roller.sample') => dockerCli(['ps', '-aq', '--filter', `label=${label}`]).stdout.trim();

async function collect(runName: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ run: string; code: number | null; stderr: string }> {
  const out = join(tmp.path, 'runs');
  const r = await roller(['collect', '--capture-calls', '--output', out, '--run-name', runName, ...args], env ? { env } : {});
  return { run: join(out, runName), code: r.code, stderr: r.stderr };
}

describe.skipIf(!live)('collect --runner docker: the same outputs as the local runner, every harness', () => {
  // Both networks across the harnesses: the host's, and none but a relay to the proxy.
  const harnesses: [string, 'host' | 'proxy', string[]][] = [
    ['claude-code', 'proxy', []],
    ['codex', 'proxy', []],
    ['opencode', 'host', []],
    ['pi', 'proxy', ['--pi-subagent-extension']],
    ['openclaw', 'host', []],
    ['deepseek', 'proxy', []],
  ];
  it.each(harnesses)('%s (%s network): the demo tasks in containers on an API model agree with the local run on the embedded model on participants, tokens, relations and SFT', async (harness, network, extra) => {
    const local = await collect(`${harness}-local`, ['--tasks', demo, '--harness', harness, ...extra]);
    expect(local.code, local.stderr).toBe(0);
    const api = ['--model', `api/${harness}`, '--model-config', provider.models];
    const docker = await collect(`${harness}-docker`, ['--tasks', demo, '--harness', harness, '--runner', 'docker', '--image', image, '--docker-network', network, ...api, ...extra], provider.env);
    expect(docker.code, docker.stderr).toBe(0);
    // The key stayed with roller's proxy: no file of the run holds it (the container had only the stand-in).
    expect(filesHolding(provider.key, [docker.run])).toEqual([]);
    expect((await roller(['validate-run', docker.run])).code).toBe(0);
    expect(info(docker.run).samples.map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
    expect(comparableRun(docker.run)).toEqual(comparableRun(local.run));
    expect(lockedContainer(docker.run)).toMatchObject({ image_id: expect.stringMatching(/^sha256:/), container: { user: '1000:1000', network, limits: { pids: 4096 } } });
    expect(lockedContainer(local.run)).toEqual({ image_id: null, container: undefined });
    for (const f of filesUnder(docker.run)) expect(readFileSync(f, 'latin1').includes(DUMMY_KEY), f).toBe(false);
    // Everything roller wrote is roller's user's again (the container's user had the sample's HOME and work dir).
    for (const f of filesUnder(docker.run)) expect(execFileSync('stat', ['-c', '%u', f], { encoding: 'utf8' }).trim(), f).toBe(String(process.getuid!()));
    expect(containersOf()).toBe('');
  }, 10 * 60_000);
});

describe.skipIf(!live)('collect --runner docker: what the agent can reach', () => {
  it('a non-root user, no host HOME, no docker socket, no new privileges, its own pid space; its links are never followed on the host', async () => {
    const probe = [
      'echo "uid=$(id -u)"',
      'ls /root >/dev/null 2>&1 && echo root-listed || echo root-unlisted',
      'test -S /var/run/docker.sock && echo socket || echo no-socket',
      'grep -q "^NoNewPrivs:.*1" /proc/self/status && echo nnp || echo privs',
      'echo "init=$(cat /proc/1/comm)"',
      'echo "home=$HOME"',
    ].join('; ');
    const tasks = await tasksFile('probe.jsonl', [
      { id: 'probe', prompt: '[PROBE] Run probe.sh.', files: { 'probe.sh': `${probe}\n` } },
      { id: 'links', prompt: '[SYMLINK] Make a link.', output_dirs: ['out'] },
    ]);
    const r = await collect('isolation', ['--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image]);
    const rows = info(r.run).samples;
    const answer = readJsonl(join(r.run, rows[0]!.path, 'trace.jsonl'))
      .filter((l) => l.type === 'assistant')
      .flatMap((l) => (l.message.content as Json[]).filter((c) => c.type === 'text').map((c) => c.text as string))
      .join('\n');
    expect(answer).toContain('uid=1000');
    expect(answer).toContain('root-unlisted');
    expect(answer).toContain('no-socket');
    expect(answer).toContain('nnp');
    expect(answer).toContain('init=docker-init');
    expect(answer).toContain(`home=/tmp/roller-sample-0-`);
    // [SYMLINK]: out/link -> /etc/hostname inside the container; the host copies out/safe.txt and refuses the link.
    const links = sample(r.run, rows[1]!);
    expect(links.status).toBe('error');
    expect(links.error?.code).toBe('ROLLER_UNSAFE_OUTPUT');
    expect(readdirSync(join(r.run, rows[1]!.path, 'results', 'out'))).toEqual(['safe.txt']);
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it('--docker-network proxy: the recording proxy is reached, a service on the host loopback is not (with host, it is)', async () => {
    const server = createServer((_req, res) => res.end('host service')).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const probe = `curl -s -m 3 -o /dev/null -w "host-http=%{http_code}" http://127.0.0.1:${port}/ || echo " host-unreachable"\n`;
      const tasks = await tasksFile('reach.jsonl', [{ id: 'reach', prompt: '[PROBE] Run probe.sh.', files: { 'probe.sh': probe } }]);
      const said = async (network: string) => {
        const r = await collect(`reach-${network}`, ['--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image, '--docker-network', network]);
        expect(r.code, r.stderr).toBe(0);
        const row = info(r.run).samples[0]!;
        expect(sample(r.run, row).usage?.requests).toBe(2); // both model calls went through the proxy
        return readFileSync(join(r.run, row.path, 'trace.jsonl'), 'utf8');
      };
      expect(await said('proxy')).toContain('host-unreachable');
      expect(await said('host')).toContain('host-http=200');
    } finally {
      server.close();
    }
    const offline = await roller(['collect', '--output', join(tmp.path, 'runs'), '--run-name', 'reach-off', '--tasks', demo, '--harness', 'claude-code', '--runner', 'docker', '--image', image, '--docker-network', 'proxy', '--wire-trace', 'off']);
    expect(offline.code).toBe(2);
    expect(offline.stderr).toContain('--docker-network proxy reaches only the recording proxy, and --wire-trace off runs none');
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it("the image's filesystem is read-only (HOME, the work dir and /tmp writable), default limits recorded in the lock", async () => {
    const probe = 'for d in /etc /usr/local /tmp "$HOME" .; do touch "$d/roller-probe" 2>/dev/null && echo "writable:$d" || echo "read-only:$d"; done';
    const tasks = await tasksFile('readonly.jsonl', [{ id: 'probe', prompt: '[PROBE] Run probe.sh.', files: { 'probe.sh': probe } }]);
    const r = await collect('readonly', ['--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image]);
    expect(r.code, r.stderr).toBe(0);
    const trace = readFileSync(join(r.run, info(r.run).samples[0]!.path, 'trace.jsonl'), 'utf8');
    for (const d of ['/etc', '/usr/local']) expect(trace).toContain(`read-only:${d}`);
    for (const d of ['/tmp', '.']) expect(trace).toContain(`writable:${d}`);
    // HOME is the fifth: of the five, exactly the two image directories refused the write.
    expect(new Set(trace.match(/read-only:[^\s"\\]+/g))).toEqual(new Set(['read-only:/etc', 'read-only:/usr/local']));
    expect(lockedContainer(r.run).container).toMatchObject({ read_only_root: true, limits: { memoryBytes: 8 * 1024 ** 3, nanoCpus: expect.any(Number), pids: 4096 } });
  }, 5 * 60_000);

  it('limits from the flags are applied and locked: a container past its memory is killed, the sample an error saying so', async () => {
    const tasks = await tasksFile('memory.jsonl', [{ id: 'hello', prompt: '[HELLO] Say hello.' }]);
    const r = await collect('memory', ['--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image, '--memory', '16m', '--cpus', '1', '--pids-limit', '256']);
    expect(r.code).toBe(1);
    expect(lockedContainer(r.run).container).toEqual({ user: '1000:1000', network: 'host', read_only_root: true, limits: { memoryBytes: 16 << 20, nanoCpus: 1e9, pids: 256 } });
    const s = sample(r.run, info(r.run).samples[0]!);
    expect(s.status).toBe('error');
    expect(s.error?.code).toBe('ROLLER_HARNESS_FAILED');
    expect(s.error?.message).toMatch(/the harness exited 137 before any model call reached its proxy/);
    // A resume under other limits is refused, naming the difference.
    const resumed = await roller(['collect', '--capture-calls', '--output', join(tmp.path, 'runs'), '--run-name', 'memory', '--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image, '--resume']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('$.container.limits.memoryBytes: 16777216 -> 8589934592');
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it("a full disk in the container: the agent's write fails with ENOSPC in its tool result; the sample is recorded", async () => {
    if (process.getuid?.() !== 0) return console.log('skipped: mounting a small tmpfs needs root');
    // The attempt's HOME and work dir live in TMPDIR: here a 24 MiB tmpfs, mounted into the container.
    const small = join(tmp.path, 'small-tmp');
    mkdirSync(small, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=1777', 'tmpfs', small]);
    try {
      const tasks = await tasksFile('fill.jsonl', [{ id: 'fill', prompt: '[PROBE] Fill the disk.', files: { 'probe.sh': 'msg=$(head -c 64000000 /dev/zero 2>&1 > big.bin); rc=$?; rm -f big.bin; echo "write-rc=$rc $msg"\n' } }]);
      const out = join(tmp.path, 'runs');
      const r = await roller(['collect', '--capture-calls', '--output', out, '--run-name', 'fill', '--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image], { env: { ...process.env, TMPDIR: small } });
      const run = join(out, 'fill');
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      const row = info(run).samples[0]!;
      expect(row.status, r.stderr).toBe('ok');
      const trace = readFileSync(join(run, row.path, 'trace.jsonl'), 'utf8');
      expect(trace).toContain('No space left on device');
      expect(trace).toContain('write-rc=1');
    } finally {
      execFileSync('umount', [small]);
    }
    expect(containersOf()).toBe('');
  }, 5 * 60_000);
});

describe.skipIf(!live)('collect --runner docker: faults end as recorded statuses, and no container is left', () => {
  it('an image that is not on the engine: a clear error naming it, before any sample; nothing pulled', async () => {
    const before = dockerCli(['images', '-q']).stdout;
    const r = await collect('no-image', ['--tasks', demo, '--harness', 'claude-code', '--runner', 'docker', '--image', 'roller-nope:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/docker: image roller-nope:1 is not on this engine .*roller never pulls/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(r.run, 'info.json'))).toBe(false);
    expect(dockerCli(['images', '-q']).stdout).toBe(before);
  });

  it('a sample past its --timeout: its container is killed (every process in it) and removed; the sample says timeout', async () => {
    const tasks = await tasksFile('slow.jsonl', [{ id: 'slow', prompt: '[SLEEP] Wait.' }]);
    const r = await collect('timeout', ['--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image, '--timeout', '4']);
    expect(r.code).toBe(1);
    const s = sample(r.run, info(r.run).samples[0]!);
    expect(s.status).toBe('timeout');
    expect(s.error?.code).toBe('ROLLER_HARNESS_TIMEOUT');
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it('Ctrl-C twice (leave at once): the running container is removed before roller exits; validate-run says how to resume', async () => {
    const tasks = await tasksFile('interrupt.jsonl', [{ id: 'slow', prompt: '[SLEEP] Wait.' }]);
    let seen = '';
    const r = await roller(['collect', '--capture-calls', '--output', join(tmp.path, 'runs'), '--run-name', 'interrupt', '--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image], {
      onStderr: (text, child) => {
        if (seen || !text.includes('started 0_slow')) return;
        seen = 'started';
        // Once its container is up: Ctrl-C (running samples would finish), and again (leave now).
        const wait = setInterval(() => {
          if (!containersOf()) return;
          clearInterval(wait);
          seen = 'container';
          child.kill('SIGINT');
          setTimeout(() => child.kill('SIGINT'), 300);
        }, 100);
      },
    });
    expect(seen).toBe('container');
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('interrupted');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(containersOf()).toBe('');
    const validated = await roller(['validate-run', join(tmp.path, 'runs', 'interrupt')]);
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain('--resume');
  }, 5 * 60_000);

  it('kill -9 of roller mid-sample: its container stops at once (its lifeline to roller closed); the --resume removes it (by its labels) and finishes the run', async () => {
    const tasks = await tasksFile('killed.jsonl', [{ id: 'slow', prompt: '[SLEEP] Wait.' }, { id: 'hello', prompt: '[HELLO] Say hello.' }]);
    const args = ['collect', '--capture-calls', '--output', join(tmp.path, 'runs'), '--run-name', 'killed', '--tasks', tasks, '--harness', 'claude-code', '--runner', 'docker', '--image', image];
    let killed = false;
    await roller(args, {
      onStderr: (text, child) => {
        if (killed || !text.includes('started 0_slow')) return;
        const wait = setInterval(() => {
          if (!containersOf()) return;
          clearInterval(wait);
          killed = true;
          child.kill('SIGKILL');
        }, 100);
      },
    });
    expect(killed).toBe(true);
    const run = join(tmp.path, 'runs', 'killed');
    expect(containersOf(`dev.roller.run=${run}`)).not.toBe('');
    // Not running on until the next roller: the harness in it is stopped within seconds (its [SLEEP] tool takes 10).
    const running = () => dockerCli(['ps', '-q', '--filter', `label=dev.roller.run=${run}`]).stdout.trim();
    for (const deadline = Date.now() + 8000; running() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 200));
    expect(running()).toBe('');
    const resumed = await roller([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/docker: removed 1 container\(s\) a killed roller left behind/);
    // The container went before its sample's temporary directory (it was still writing there).
    expect(resumed.stderr).not.toContain('could not remove');
    expect(info(run).samples.map((s) => s.status)).toEqual(['ok', 'ok']);
    expect(containersOf()).toBe('');
  }, 5 * 60_000);
});

describe.skipIf(!live)('collect --tasks DIR: Harbor task directories, each in the image its Dockerfile builds', () => {
  const examples = join(import.meta.dirname, '..', '..', 'examples', 'harbor');

  it('the three examples: images built once per build context, the verifier run as Harbor runs it, rewards in the grades', async () => {
    const first = await collect('harbor', ['--tasks', examples, '--harness', 'claude-code', '--runner', 'docker']);
    expect(first.code, first.stderr).toBe(0);
    expect((await roller(['validate-run', first.run])).code).toBe(0);
    const grades = Object.fromEntries(info(first.run).samples.map((row) => [row.task_id, sample(first.run, row).grade]));
    expect(grades['write-hello']).toMatchObject({ status: 'passed', scores: { reward: 1 } });
    expect(grades['say-hello-only']).toMatchObject({ status: 'failed', exit_code: 1, scores: { reward: 0 } });
    // reward.json, the file the image brought at its WORKDIR, and [verifier.env].
    expect(grades['keep-notes']).toMatchObject({ status: 'passed', scores: { reward: 1, wrote_hello: 1, kept_notes: 1 } });
    expect(info(first.run).samples.map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
    const locked = lockedContainer(first.run);
    expect(locked.image_id).toBeNull();
    expect(Object.keys(locked.container.task_images).sort()).toEqual(['keep-notes', 'say-hello-only', 'write-hello']);
    // The second run builds nothing: the images are found by their context's digest.
    const second = await collect('harbor-again', ['--tasks', join(examples, 'write-hello'), '--harness', 'claude-code', '--runner', 'docker']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('docker: building');
    expect(lockedContainer(second.run).container.task_images['write-hello']).toBe(locked.container.task_images['write-hello']);
    expect(containersOf()).toBe('');
  }, 10 * 60_000);

  it("the agent sees its task's files but not the tests (uploaded only for the verifier); a changed task is refused by --resume", async () => {
    const task = join(tmp.path, 'harbor-probe', 'probe-task');
    mkdirSync(join(task, 'environment'), { recursive: true });
    mkdirSync(join(task, 'tests'), { recursive: true });
    const write = (rel: string, text: string) => writeFileSync(join(task, rel), text);
    write('task.toml', '[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 30.0\n');
    write('instruction.md', '[PROBE] Run probe.sh.\n');
    write('environment/Dockerfile', 'FROM roller-base\nUSER root\nWORKDIR /srv/task\nCOPY probe.sh /srv/task/probe.sh\nUSER agent\n');
    write('environment/probe.sh', 'test -e /tests && echo tests-visible || echo tests-hidden; test -e /logs/verifier && echo logs-visible || echo logs-hidden; echo "pwd-files=$(ls /srv/task | tr "\\n" " ")"\n');
    write('tests/test.sh', 'test -f /tests/test.sh && test -f /srv/task/probe.sh && echo 1 > /logs/verifier/reward.txt\n');
    const args = ['--tasks', `harbor:${task}`, '--harness', 'claude-code', '--runner', 'docker'];
    const r = await collect('harbor-probe', args);
    expect(r.code, r.stderr).toBe(0);
    const row = info(r.run).samples[0]!;
    const answer = readFileSync(join(r.run, row.path, 'trace.jsonl'), 'utf8');
    expect(answer).toContain('tests-hidden');
    expect(answer).toContain('logs-hidden');
    expect(answer).toContain('pwd-files=probe.sh');
    expect(sample(r.run, row).grade).toMatchObject({ status: 'passed', scores: { reward: 1 } });
    // One byte of the task changed: the bundle is another, and the resume says so.
    write('tests/test.sh', 'echo 0 > /logs/verifier/reward.txt\n');
    const resumed = await roller(['collect', '--capture-calls', '--output', join(tmp.path, 'runs'), '--run-name', 'harbor-probe', ...args, '--resume']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('$.task_bundle_digest');
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it('an image builds with no network unless its task.toml asks: a RUN reaching a service on the host\'s loopback fails, and is allowed (and locked) with build_network = "host"', async () => {
    let hits = 0;
    const service = await startUpstream((_req, res) => void (hits++, res.end('reached')));
    const port = new URL(service.url).port;
    try {
      const makeTask = (name: string, toml: string) => {
        const task = join(tmp.path, 'harbor-net', name);
        mkdirSync(join(task, 'environment'), { recursive: true });
        mkdirSync(join(task, 'tests'), { recursive: true });
        writeFileSync(join(task, 'task.toml'), toml);
        writeFileSync(join(task, 'instruction.md'), '[HELLO] Say hello.\n');
        // A build step that fails unless it reaches the host's loopback service.
        writeFileSync(join(task, 'environment', 'Dockerfile'), `FROM roller-base\nRUN node -e "fetch('http://127.0.0.1:${port}/from-build').then((r) => r.text()).then(console.log)"\n`);
        writeFileSync(join(task, 'tests', 'test.sh'), 'echo 1 > /logs/verifier/reward.txt\n');
        return task;
      };
      const offline = await collect('harbor-net-none', ['--tasks', `harbor:${makeTask('no-net', '[agent]\ntimeout_sec = 120.0\n')}`, '--harness', 'claude-code', '--runner', 'docker']);
      expect(offline.code).not.toBe(0);
      expect(offline.stderr).toContain('the build has no network: a task whose Dockerfile fetches something says [environment] build_network = "host"');
      expect(hits).toBe(0);
      const online = await collect('harbor-net-host', ['--tasks', `harbor:${makeTask('host-net', '[agent]\ntimeout_sec = 120.0\n[environment]\nbuild_network = "host"\n')}`, '--harness', 'claude-code', '--runner', 'docker']);
      expect(online.code, online.stderr).toBe(0);
      expect(online.stderr).toContain("on the host's network (its task.toml asks for it)");
      expect(hits).toBe(1);
      expect(lockedContainer(online.run).container.networked_builds).toEqual(['host-net']);
    } finally {
      await service.close();
    }
  }, 5 * 60_000);

  it('roller oracle: each task solved by its own solution.sh and verified; a wrong solution, a failing one and a missing one are named, exit 1', async () => {
    const good = await roller(['oracle', '--tasks', examples, '--json']);
    expect(good.code, good.stderr).toBe(0);
    const rows = good.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(rows.map((r) => [r.task, r.status, r.grade.scores.reward])).toEqual([['keep-notes', 'passed', 1], ['say-hello-only', 'passed', 1], ['write-hello', 'passed', 1]]);
    const set = join(tmp.path, 'oracle-set');
    cpSync(join(examples, 'write-hello'), join(set, 'wrong'), { recursive: true });
    writeFileSync(join(set, 'wrong', 'solution', 'solve.sh'), 'echo bye > /app/hello.txt\n');
    cpSync(join(examples, 'write-hello'), join(set, 'broken'), { recursive: true });
    writeFileSync(join(set, 'broken', 'solution', 'solve.sh'), 'exit 3\n');
    cpSync(join(examples, 'write-hello'), join(set, 'unsolved'), { recursive: true });
    rmSync(join(set, 'unsolved', 'solution'), { recursive: true });
    const bad = await roller(['oracle', '--tasks', set]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^solution_failed\s+broken — solve.sh exited 3$/m);
    expect(bad.stdout).toMatch(/^no_solution\s+unsolved — .*solution\/solve.sh is missing$/m);
    expect(bad.stdout).toMatch(/^failed\s+wrong reward \{"reward":0\}/m);
    expect(bad.stderr).toContain('0 of 3 tasks passed by their own solution');
    expect(containersOf()).toBe('');
  }, 5 * 60_000);

  it('Harbor tasks need the docker runner; a task directory missing its verifier is named before anything runs', async () => {
    const local = await collect('harbor-local', ['--tasks', examples, '--harness', 'claude-code']);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('Harbor tasks run in their own image: pass --runner docker');
    const broken = join(tmp.path, 'harbor-broken', 'no-tests');
    mkdirSync(join(broken, 'environment'), { recursive: true });
    writeFileSync(join(broken, 'task.toml'), '[agent]\ntimeout_sec = 10\n');
    writeFileSync(join(broken, 'instruction.md'), '[HELLO] hi\n');
    writeFileSync(join(broken, 'environment', 'Dockerfile'), 'FROM roller-base\n');
    const r = await collect('harbor-broken', ['--tasks', join(tmp.path, 'harbor-broken'), '--harness', 'claude-code', '--runner', 'docker']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(broken, 'tests/test.sh')}: missing (a Harbor task needs it)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
