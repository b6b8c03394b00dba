/**
 * vitest globalSetup: after the whole suite, nothing the tests started may be left — no private dockerd
 * (scripts/docker-engine.sh under a roller-engine-* directory), no mount under one, no proxy relay directory, no test
 * Slurm cluster's or Redis server's daemon.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';

function cwdOf(pid: string): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
}

function leftovers(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    const cmd = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        return '';
      }
    })();
    if (/dockerd .*roller-engine-/.test(cmd)) found.push(`dockerd still running (pid ${pid}): ${cmd.slice(0, 160)}`);
    if (/munged .*roller-slurm-/.test(cmd)) found.push(`test munged still running (pid ${pid}): ${cmd.slice(0, 160)}`);
    // Redis names itself by its address; its working directory is the test's.
    if (/^redis-server /.test(cmd) && /roller-redis-/.test(cwdOf(pid))) found.push(`test redis-server still running (pid ${pid}): ${cmd.slice(0, 160)}`);
    const conf = (() => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (/(^|\/)(slurmctld|slurmd) /.test(`${cmd} `) && /SLURM_CONF=[^\0]*roller-slurm-/.test(conf)) found.push(`Slurm daemon still running (pid ${pid}): ${cmd.slice(0, 160)}`);
  }
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const at = line.split(' ')[1] ?? '';
    if (/roller-engine-|\/rdk-/.test(at)) found.push(`mount left: ${at}`);
  }
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith('roller-relay-'))) found.push(`relay directory left: ${tmpdir()}/${name}`);
  return found;
}

export default function setup(): () => void {
  const before = new Set(leftovers()); // another run's, not this suite's
  return () => {
    const left = leftovers().filter((l) => !before.has(l));
    if (left.length === 0) return;
    // vitest reports a teardown's throw but exits 0: the exit code is set here.
    process.stderr.write(`the test suite left behind:\n${left.join('\n')}\n`);
    process.exitCode = 1;
  };
}
